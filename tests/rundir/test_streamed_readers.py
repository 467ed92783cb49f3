"""The end-of-run readers (spend, tokens, failures report, resume, the history ranking)
read the log a few parts at a time: the same figures as reading whole tables."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import arena.report._inputs as inputs_module
import arena.store._log as log_module
from arena.config import load_tournament
from arena.ops import failures_by_reason
from arena.pipeline import ReviewIdSet, build_plan, settled_reviews
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict
from arena.store import RunLog, token_totals
from arena.store._files import list_parts, sealed_path
from tests.conftest import small_tournament
from tests.rundir._support import edit_yaml, priced, run
from tests.store.test_store_log import write_rows

FLAKY = {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}}
CALL_TABLES = ("answers", "reviews")


def _flaky_nights(tmp_path: Path) -> Path:
    """Three nights of a priced sim tournament whose calls fail now and then: several
    parts per table, failed rows superseded by later ones, failures still open."""
    yaml_path = small_tournament(
        tmp_path, models=3, questions=4, sim={"failure_rate": 0.3}, extra={**FLAKY, **priced()}
    )
    for _ in range(3):
        run(yaml_path)
    out = tmp_path / "out"
    assert all(len(list_parts(out / "log", table)) >= 3 for table in CALL_TABLES)
    return out


def _heal(data: dict[str, Any]) -> None:
    """No sim model fails any more."""
    for model in data["models"].values():
        model["sim"]["failure_rate"] = 0.0


def _spend(log: RunLog) -> float:
    """Every billed row's cost, from whole-table reads (identical rows once)."""
    total = 0.0
    for table in CALL_TABLES:
        rows = log.read_all(table, ["cost_usd", "started_at", "finished_at", "provider", "run_id"])
        total += float(rows["cost_usd"].fill_null(0.0).sum())
    return total


def _tokens(log: RunLog) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for table in CALL_TABLES:
        rows = log.read_all(
            table, ["tokens_in", "tokens_out", "started_at", "finished_at", "run_id"]
        )
        for column in ("tokens_in", "tokens_out"):
            totals[column] += int(rows[column].fill_null(0).sum())
    return dict(totals)


def _failed(log: RunLog) -> Counter[tuple[str, str]]:
    """Calls whose latest row failed, per (table, model), from whole-table reads."""
    counts: Counter[tuple[str, str]] = Counter()
    for table, caller in (("answers", "model"), ("reviews", "reviewer")):
        frame = log.read(table, ["status", caller]).filter(pl.col("status") == "failed")
        counts.update((table, str(m)) for m in frame[caller].to_list())
    return counts


def _by_model(entries: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for entry in entries:
        counts[(entry["table"], entry["model"])] += entry["count"]
    return counts


@pytest.mark.parametrize("parts", [1, 2, 1000])
def test_streamed_totals_equal_whole_table_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: int
) -> None:
    out = _flaky_nights(tmp_path)
    log = RunLog(out)
    spend, tokens, failed = _spend(log), _tokens(log), _failed(log)
    assert spend > 0 and sum(failed.values()) > 0
    monkeypatch.setattr(log_module, "SCAN_PARTS", parts)  # parts per frame of a scan
    assert log.spent_usd() == pytest.approx(spend, rel=1e-12)
    totals = token_totals(log)
    assert (totals["tokens_in"], totals["tokens_out"]) == (
        tokens["tokens_in"],
        tokens["tokens_out"],
    )
    assert totals["tokens_reasoning"] is None  # no row reported it
    report = failures_by_reason(out, 0.0)
    assert _by_model(report) == failed
    assert all(entry["sample"] for entry in report)


def test_the_end_of_run_readers_never_read_a_table_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _flaky_nights(tmp_path)
    log = RunLog(out)
    spend, tokens, failed = _spend(log), _tokens(log), _failed(log)

    def whole(self: RunLog, table: str, columns: Any = None) -> pl.DataFrame:
        raise AssertionError(f"table {table!r} read whole")

    monkeypatch.setattr(RunLog, "read", whole)
    monkeypatch.setattr(RunLog, "read_all", whole)
    monkeypatch.setattr(log_module, "SCAN_PARTS", 1)
    assert log.spent_usd() == pytest.approx(spend, rel=1e-12)
    assert token_totals(log)["tokens_in"] == tokens["tokens_in"]
    assert _by_model(failures_by_reason(out, 0.0)) == failed


def test_rows_left_twice_by_a_crash_count_once(tmp_path: Path) -> None:
    out = _flaky_nights(tmp_path)
    log = RunLog(out)
    spend, tokens, failed = _spend(log), _tokens(log), _failed(log)
    # A crash between a part and the deletion of its journal: the part's rows are
    # in a sealed journal with the part's key as well.
    key, part = list_parts(log.log_dir, "reviews")[1]
    rows = pl.read_parquet(part).to_dicts()
    sealed_path(log.log_dir, "reviews", key).write_text(
        "".join(json.dumps(row) + "\n" for row in rows)
    )
    assert log.spent_usd() == pytest.approx(spend, rel=1e-12)
    assert token_totals(log)["tokens_out"] == tokens["tokens_out"]
    assert _by_model(failures_by_reason(out, 0.0)) == failed


def test_rows_alike_but_for_their_ids_are_different_calls_and_ids_are_read_only_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spend hashes rows without their ids; two rows that agree on everything else
    (two calls started and ended at the same instants) send it to the ids, and both
    count. A log whose rows all differ is added up without reading an id."""
    from tests.store.test_store_log import review

    seen: list[bool] = []
    real_scan = RunLog.scan

    def scan(self: RunLog, table: str, columns: Any = None, **kwargs: Any) -> Any:
        seen.append(kwargs.get("ids", True))
        return real_scan(self, table, columns, **kwargs)

    monkeypatch.setattr(RunLog, "scan", scan)
    alike = {"cost_usd": 0.5, "started_at": 10.0, "finished_at": 11.0}
    write_rows(tmp_path, [("reviews", review(0, **alike)), ("reviews", review(1, **alike))])
    write_rows(tmp_path, [("reviews", review(2, cost_usd=0.25))])
    assert RunLog(tmp_path).spent_by_provider("reviews") == {"sim": pytest.approx(1.25)}
    assert seen == [False, True]  # the ids read once two rows agreed without them

    other = tmp_path / "other"
    seen.clear()
    rows = [("reviews", review(i, started_at=float(i), cost_usd=0.125)) for i in range(4)]
    write_rows(other, rows)
    assert RunLog(other).spent_by_provider("reviews") == {"sim": pytest.approx(0.5)}
    assert seen == [False]


def test_the_night_report_counts_only_this_runs_failures(tmp_path: Path) -> None:
    out = _flaky_nights(tmp_path)
    yaml_path = tmp_path / "t.yaml"
    edit_yaml(yaml_path, _heal)
    line = run(yaml_path)
    assert line["exit_code"] == 0
    # Run ids begin with the second they started: runs of one second sort by chance,
    # so this run's report is found by its id.
    reports = [json.loads(p.read_text()) for p in (out / "reports").glob("*.json")]
    mine = [r for r in reports if r["run"]["run_id"] == line["run_id"]]
    assert len(mine) == 1 and mine[0]["failures"] == []
    earlier = [r for r in reports if r["run"]["run_id"] != line["run_id"]]
    assert earlier and any(r["failures"] for r in earlier)


def test_resume_skips_exactly_the_reviews_logged_with_a_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _flaky_nights(tmp_path)
    yaml_path = tmp_path / "t.yaml"
    log = RunLog(out)
    plan = build_plan(load_tournament(yaml_path))
    ids = [r.id for r in plan.reviews]
    # A review logged ok, then logged again as failed (its latest row), and a row
    # whose id no plan makes: neither counts as done.
    ok = log.read("reviews").filter(pl.col("status") == "ok")
    again = ok.head(1).with_columns(status=pl.lit("failed"), error=pl.lit("transient: x"))
    foreign = ok.head(1).with_columns(id=pl.lit("r-0"))
    write_rows(out, [("reviews", row) for row in [*again.to_dicts(), *foreign.to_dicts()]])
    done = log.ids("reviews", {"ok", "invalid"})
    monkeypatch.setattr(log_module, "SCAN_PARTS", 1)
    mask = settled_reviews(log, plan.reviews.ids)
    assert mask.tolist() == [rid in done for rid in ids]
    assert again["id"][0] in ids and not mask[ids.index(again["id"][0])]
    # `arena run` skips those and runs the rest (sim failures healed).
    edit_yaml(yaml_path, _heal)
    line = run(yaml_path)
    assert line["by_stage"]["reviews"].get("skipped", 0) == int(mask.sum())
    assert line["by_stage"]["reviews"]["completed"] == len(ids) - int(mask.sum())


def test_review_id_set_holds_exactly_the_plans_review_ids(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=5)
    plan = build_plan(load_tournament(yaml_path))
    ids = [r.id for r in plan.reviews]
    found = ReviewIdSet(plan.reviews.ids)
    assert len(found) == len(ids) and all(rid in found for rid in ids)
    half = ReviewIdSet(plan.reviews.take(list(range(0, len(ids), 2))).ids)
    assert [rid in half for rid in ids] == [i % 2 == 0 for i in range(len(ids))]
    other = "r-" + ("0" * 24 if ids[0][2:] != "0" * 24 else "1" * 24)
    for rid in (other, ids[0].upper(), ids[0][:-1], "a-" + ids[0][2:], "r-" + "z" * 24, None):
        assert rid not in found
    assert ids[0] not in ReviewIdSet(plan.reviews.take([]).ids)


def test_the_history_ranking_reads_the_reviews_as_codes_with_the_same_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _flaky_nights(tmp_path)
    options = LeaderboardOptions(bootstrap=20, elo_orders=5)

    def board() -> dict[str, Any]:
        data = leaderboard_dict(build_leaderboard(out, options=options, ratings_only=True))
        return {k: data[k] for k in ("models", "counts")}

    texts_read = RunLog.read

    def no_whole_reviews(self: RunLog, table: str, columns: Any = None) -> pl.DataFrame:
        assert table != "reviews", "the reviews were read whole, as texts"
        return texts_read(self, table, columns)

    with monkeypatch.context() as patch:
        patch.setattr(log_module, "SCAN_PARTS", 1)
        patch.setattr(RunLog, "read", no_whole_reviews)
        coded = board()
    assert coded["counts"]["failed"] > 0
    # A stage that may change the reviews (the discussions) gets them as texts.
    monkeypatch.setattr(inputs_module, "_rewrites_reviews", lambda log: True)
    assert board() == coded
