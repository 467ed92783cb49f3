"""`arena status` on known logs, `arena retry-failed`, and the plan file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl

from arena.rundir import PLAN_FILE, current_rows, read_history, read_plan, status_report, write_plan
from arena.rundir._planfile import PLAN_SCHEMA
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.rundir._support import add_model, as_json, cli, edit_yaml, run

_FLAKY = {
    "sim": {"failure_rate": 0.3},
    "extra": {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}},
}


def _plan_row(id: str, stage: str, provider: str, **key: str) -> dict[str, Any]:
    return {"id": id, "stage": stage, "provider": provider, **key}


def _call(id: str, status: str, provider: str, cost: float, **key: str) -> dict[str, Any]:
    return {"id": id, "status": status, "provider": provider, "cost_usd": cost, **key}


async def _write(directory: Path, rows: list[tuple[str, dict[str, Any]]]) -> None:
    async with RunLog(directory).writer() as writer:
        for table, row in rows:
            await writer.write(table, row)


def test_status_counts_every_state_per_stage_and_provider_and_sums_spend(
    tmp_path: Path,
) -> None:
    ans = {"question_id": "q"}
    plan = pl.DataFrame(
        [
            _plan_row("a1", "answers", "p1", model="x", **ans),
            _plan_row("a2", "answers", "p1", model="y", **ans),
            _plan_row("a3", "answers", "p2", model="z", **ans),
            _plan_row("r1", "reviews", "p1", model_a="x", model_b="y", reviewer="x", **ans),
            _plan_row("r2", "reviews", "p1", model_a="y", model_b="x", reviewer="x", **ans),
            _plan_row("r3", "reviews", "p2", model_a="x", model_b="y", reviewer="z", **ans),
            _plan_row("r4", "reviews", "p2", model_a="y", model_b="x", reviewer="z", **ans),
        ],
        schema=PLAN_SCHEMA,
    )
    key_r3 = {"model_a": "x", "model_b": "y", "reviewer": "z", **ans}
    asyncio.run(
        _write(
            tmp_path,
            [
                ("answers", _call("a1", "ok", "p1", 0.5, model="x", **ans)),
                ("answers", _call("a2", "failed", "p1", 0.25, model="y", **ans)),
                ("answers", _call("a3-old", "ok", "p2", 1.0, model="z", **ans)),  # stale: a3
                ("answers", _call("gone", "ok", "p3", 2.0, model="w", **ans)),  # removed model
                (
                    "reviews",
                    _call("r1", "ok", "p1", 0.125, model_a="x", model_b="y", reviewer="x", **ans),
                ),
                (
                    "reviews",
                    _call(
                        "r2", "invalid", "p1", 0.125, model_a="y", model_b="x", reviewer="x", **ans
                    ),
                ),
                ("reviews", _call("r3-old", "ok", "p2", 4.0, **key_r3)),  # stale: r3
                ("reviews", _call("r3-older", "failed", "p2", 8.0, **key_r3)),
            ],
        )
    )
    report = status_report(plan, RunLog(tmp_path))
    rows = {(r["stage"], r["provider"]): r for r in report.rows}
    states = ("planned", "done", "invalid", "failed", "stale", "pending", "spent_usd")
    assert [rows["answers", "p1"][k] for k in states] == [2, 1, 0, 1, 0, 0, 0.75]
    assert [rows["answers", "p2"][k] for k in states] == [1, 0, 0, 0, 1, 0, 1.0]
    assert [rows["answers", "p3"][k] for k in states] == [0, 0, 0, 0, 0, 0, 2.0]
    assert [rows["reviews", "p1"][k] for k in states] == [2, 1, 1, 0, 0, 0, 0.25]
    assert [rows["reviews", "p2"][k] for k in states] == [2, 0, 0, 0, 1, 1, 12.0]
    assert report.total["planned"] == 7 and report.total["spent_usd"] == 16.0
    assert report.outside_plan == {
        "answers": {"stale": 1, "unused": 1},
        "reviews": {"stale": 2, "unused": 0},
    }


def test_retry_failed_reruns_only_failed_calls_and_the_reviews_they_blocked(
    tmp_path: Path,
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=3, **_FLAKY)  # type: ignore[arg-type]
    out = tmp_path / "out"
    first = run(yaml_path)
    assert first["exit_code"] == 3 and first["failed"] > 0
    before = as_json("status", str(out))["total"]
    assert before["failed"] == first["failed"] and before["pending"] == first["pending"]
    ok_before = RunLog(out).read("reviews").filter(pl.col("status") == "ok")

    # More attempts change no call id: the plan is the same.
    edit_yaml(yaml_path, lambda d: d["retry"].update(max_attempts=8))
    result = cli("retry-failed", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    # Every pending call of the first run waited on a failed answer.
    assert summary["retried"] == before["failed"] and summary["unblocked"] == before["pending"]
    assert summary["planned"] == before["failed"] + before["pending"]
    assert summary["completed"] + summary["invalid"] == summary["planned"]
    after = as_json("status", str(out))["total"]
    assert after["failed"] == after["stale"] == after["pending"] == 0
    kept = RunLog(out).read("reviews").join(ok_before.select("id", "run_id"), on="id")
    assert (kept["run_id"] == kept["run_id_right"]).all()  # nothing done was redone
    snapshots = read_history(out)["snapshot"].n_unique()
    assert snapshots == 2  # the first run and the retry
    again = json.loads(cli("retry-failed", str(out), "--json").stdout)
    assert again["planned"] == 0 and again["exit_code"] == 0
    assert read_history(out)["snapshot"].n_unique() == snapshots  # a no-op adds nothing

    # The plain summary line bills the retry's tokens as `arena run`'s does.
    line = cli("retry-failed", str(out)).output
    assert "retried 0 failed calls" in line and "tokens in 0 (cache read 0, write 0), out 0" in line

    # A new contestant is new work for `arena run`, not a retry.
    edit_yaml(yaml_path, add_model("m3", 0.0))
    result = cli("retry-failed", str(out))
    assert result.exit_code == 2 and "changed since the last run" in result.output
    assert read_plan(out) is not None and "m3" not in read_plan(out)["model"].to_list()  # type: ignore[index]


def test_retry_failed_needs_a_recorded_config_or_config_option(tmp_path: Path) -> None:
    result = cli("retry-failed", str(tmp_path))
    assert result.exit_code == 2 and "--config" in result.output
    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    result = cli("retry-failed", str(tmp_path / "elsewhere"), "--config", str(yaml_path), "--json")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "elsewhere" / PLAN_FILE).is_file()


def test_status_falls_back_to_the_plan_file_when_the_yaml_is_gone(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    run(yaml_path)
    yaml_path.unlink()
    data = as_json("status", str(tmp_path / "out"))
    assert data["plan_source"] == "plan.parquet"
    assert data["total"]["planned"] == data["total"]["done"] == 2 + 1 * 2 * 2
    table = cli("status", str(tmp_path / "out"))
    assert table.exit_code == 0 and "reviews" in table.stdout
    assert cli("status", str(tmp_path / "nothing")).exit_code == 2


def test_plan_file_is_written_atomically_and_filters_rows(tmp_path: Path) -> None:
    assert read_plan(tmp_path) is None
    frame = pl.DataFrame({"id": ["r1", "r2"], "stage": ["reviews", "reviews"]}).with_columns(
        pl.lit(None, dtype=pl.String).alias(c) for c in PLAN_SCHEMA.names()[2:]
    )
    write_plan(tmp_path, frame)
    assert sorted(p.name for p in tmp_path.iterdir()) == [PLAN_FILE]
    rows = pl.DataFrame({"id": ["r0", "r2", "r1"], "v": [0, 2, 1]})
    assert current_rows(tmp_path, "reviews", rows)["id"].to_list() == ["r2", "r1"]
    assert current_rows(tmp_path, "answers", rows).height == 0
    assert current_rows(tmp_path / "none", "reviews", rows).height == 3
