"""BatchEval and discussion calls in `arena plan` and `arena status`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arena.batcheval import TABLE as BATCHEVAL
from arena.config import load_tournament
from arena.discuss import TABLE as DISCUSSIONS
from arena.discuss import discussion_stats, read_state
from arena.pipeline import build_plan
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.rundir._support import as_json, cli, edit_yaml, run

CRITERIA = [
    {"name": "helpfulness", "description": "Does it help?", "scale": {"low": 1, "high": 5}},
    {"name": "accuracy", "description": "Is it correct?", "scale": {"low": 1, "high": 10}},
]
# 3 contestants x 4 questions = 12 answers in batches of 5: 3 batches per round,
# x 2 rounds x 2 criteria x 2 scorers = 24 batch calls (12 per scorer).
BATCHEVAL_SECTION: dict[str, Any] = {
    "scorers": ["m0", "m1"],
    "criteria": CRITERIA,
    "batch_size": 5,
    "rounds": 2,
}
DISCUSSION_SECTION: dict[str, Any] = {
    "trigger": ["tie", "inconsistent"],
    "max_turns": 3,
    "allow_contestants": True,  # three models: no reviewer is outside a battle
}
PRICES = {name: {"input": 1.0, "output": 2.0} for name in ("m0", "m1", "m2", "judge")}


def _yaml(tmp: Path, **extra: Any) -> Path:
    return small_tournament(
        tmp,
        models=3,
        questions=4,
        sim={"judge_noise": 0.8, "position_bias": 0.4},
        extra={"prices": PRICES, **extra},
    )


def _both(tmp: Path) -> Path:
    return _yaml(tmp, batcheval=BATCHEVAL_SECTION, discussion=DISCUSSION_SECTION)


def _size(path: Path) -> int:
    return build_plan(load_tournament(path)).size


def test_plan_counts_batcheval_calls_and_bounds_discussions(tmp_path: Path) -> None:
    path = _both(tmp_path)
    plan = as_json("plan", str(path))
    rows = {r["model"]: r for r in plan["rows"]}
    assert {m: r["batcheval"] for m, r in rows.items()} == {"m0": 12, "m1": 12, "m2": 0}
    assert rows["m0"]["calls"] == rows["m0"]["answers"] + rows["m0"]["reviews"] + 12
    total = plan["total"]
    assert total["batcheval"] == 24 and total["calls"] == _size(path) + 24
    assert total["new"] == total["pending"] == total["calls"] and total["done"] == 0
    assert plan["batcheval"] == {
        "calls": 24,
        "rounds": 2,
        "batches_per_round": 3,
        "criteria": 2,
        "scorers": 2,
    }
    # Every ordered battle (4 questions x 3 x 2) by the top two, 2 initial reviews
    # and 3 turns each asked at most twice.
    assert plan["discussion"] == {
        "battles": 24,
        "pairs": 1,
        "max_turns": 3,
        "max_calls": 24 * 2 * (3 + 2),
        "logged": None,
    }
    text = cli("plan", str(path)).output
    assert "batcheval: 2 rounds x 3 batches x 2 criteria x 2 scorers = 24 calls" in text
    assert "discussion: depends on triggers; at most 24 battles x 1 pair(s) x 2 x (3 turns" in text
    assert "= 240 calls" in text


def test_plan_without_the_sections_has_no_extra_calls(tmp_path: Path) -> None:
    path = _yaml(tmp_path)
    plan = as_json("plan", str(path))
    assert plan["batcheval"] is None and plan["discussion"] is None
    assert plan["total"]["batcheval"] == 0 and plan["total"]["calls"] == _size(path)
    text = cli("plan", str(path)).output
    assert "batcheval" not in text and "discussion" not in text


def test_all_pairs_discuss_each_battle_once_per_pair(tmp_path: Path) -> None:
    section = {
        "discussants": {"all-pairs": ["m0", "m1", "m2"]},
        "max_turns": 2,
        "allow_contestants": True,
    }
    plan = as_json("plan", str(_yaml(tmp_path, discussion=section)))
    assert plan["discussion"]["pairs"] == 3
    assert plan["discussion"]["max_calls"] == 24 * 3 * 2 * (2 + 2)


def test_plan_estimate_bounds_what_batcheval_spends(tmp_path: Path) -> None:
    path = _yaml(tmp_path, batcheval=BATCHEVAL_SECTION)
    estimate = as_json("plan", str(path))["total"]["est_cost_usd"]
    summary = run(path)
    assert summary["exit_code"] == 0
    spent = RunLog(tmp_path / "out").read(BATCHEVAL)["cost_usd"].sum()
    assert spent > 0 and summary["spent_usd"] <= estimate


def test_status_and_plan_after_a_run_with_both(tmp_path: Path) -> None:
    path = _both(tmp_path)
    out = tmp_path / "out"
    summary = run(path)
    assert summary["exit_code"] == 0
    stage = summary["by_stage"]["batcheval"]

    status = as_json("status", str(out))
    rows = [r for r in status["rows"] if r["stage"] == "batcheval"]
    assert [r["provider"] for r in rows] == ["sim"]
    assert status["batcheval"] == {
        k: v for k, v in rows[0].items() if k not in ("stage", "provider")
    }
    assert rows[0]["planned"] == 24
    assert (rows[0]["done"], rows[0]["invalid"]) == (stage["completed"], stage["invalid"])
    assert rows[0]["failed"] == rows[0]["stale"] == rows[0]["pending"] == 0
    assert status["total"]["planned"] == _size(path) + 24
    assert status["outside_plan"]["batcheval"] == {"stale": 0, "unused": 0}
    assert "batcheval" not in {r["table"] for r in status["other_tables"]}
    log = RunLog(out)
    spent = {
        t: float(log.read(t)["cost_usd"].fill_null(0).sum())
        for t in ("answers", "reviews", BATCHEVAL, DISCUSSIONS)
    }
    assert spent[BATCHEVAL] > 0 and rows[0]["spent_usd"] == pytest.approx(spent[BATCHEVAL])
    assert status["total"]["spent_usd"] == pytest.approx(sum(spent.values()))

    table = log.read(DISCUSSIONS)
    state = read_state(out)
    assert state is not None
    stats = discussion_stats(table, state.context)
    counted = status["discussions"]
    assert counted["logged"] == table["discussion_id"].n_unique() > 0
    assert (counted["agreed"], counted["unresolved"]) == (stats.agreed, stats.unresolved)
    assert counted["agreed"] + counted["unresolved"] == stats.discussions == counted["logged"]
    assert counted["in_progress"] == counted["stale"] == counted["failed_calls"] == 0
    calls = table.filter(pl.col("kind").is_in(["initial", "turn"]) & pl.col("review_id").is_null())
    assert counted["calls"] == calls.height == sum(summary["by_stage"]["discussions"].values())
    text = cli("status", str(out)).output
    assert "batcheval" in text
    assert f"discussions: {counted['logged']} logged ({counted['agreed']} agreed" in text

    plan = as_json("plan", str(path))
    assert plan["total"]["pending"] == 0 and plan["total"]["done"] == plan["total"]["calls"]
    assert plan["total"]["est_cost_usd"] == 0
    assert plan["discussion"]["logged"] == counted
    assert f"logged: {counted['logged']} discussions" in cli("plan", str(path)).output


def test_a_changed_batcheval_section_makes_every_batch_stale(tmp_path: Path) -> None:
    path = _yaml(tmp_path, batcheval=BATCHEVAL_SECTION)
    out = tmp_path / "out"
    assert run(path)["exit_code"] == 0
    edit_yaml(path, lambda d: d["batcheval"].update(temperature=0.5))
    status = as_json("status", str(out))
    assert status["batcheval"]["stale"] == status["batcheval"]["planned"] == 24
    assert status["outside_plan"]["batcheval"] == {"stale": 24, "unused": 0}
    plan = as_json("plan", str(path))["total"]
    assert (plan["batcheval"], plan["done"], plan["stale"]) == (24, _size(path), 24)
    # One scorer fewer: its batches are no longer planned at all.
    edit_yaml(path, lambda d: d["batcheval"].update(temperature=0.2, scorers=["m0"]))
    status = as_json("status", str(out))
    assert status["batcheval"]["done"] + status["batcheval"]["invalid"] == 12
    assert status["outside_plan"]["batcheval"] == {"stale": 0, "unused": 12}


def test_status_mirrors_the_stage_through_failed_batches(tmp_path: Path) -> None:
    # A scorer that often fails: failed batches leave their samples unscored for
    # the round and the next rounds go on; the next run asks them again.
    path = _yaml(tmp_path, batcheval={**BATCHEVAL_SECTION, "scorers": ["judge"]})
    edit_yaml(
        path,
        lambda d: d["models"].update(judge={"provider": "sim", "sim": {"failure_rate": 0.75}}),
    )
    out = tmp_path / "out"
    for _ in range(2):
        summary = run(path)
        stage = summary["by_stage"]["batcheval"]
        status = as_json("status", str(out))["batcheval"]
        assert status["planned"] == stage["planned"] == 12
        assert status["failed"] == stage["failed"]
        assert status["done"] + status["invalid"] == (
            stage["skipped"] + stage["completed"] + stage["invalid"]
        )
        assert status["pending"] == stage["pending"] == 0
        logged = RunLog(out).read(BATCHEVAL)
        failed_batches = logged.filter(pl.col("status") == "failed")["batch_id"].n_unique()
        assert 0 < status["failed"] <= failed_batches
        # Failed batches in both rounds, and batches of round 2 logged with a result.
        assert set(logged.filter(pl.col("status") == "failed")["round"].to_list()) == {1, 2}
        assert 2 in logged.filter(pl.col("status") == "ok")["round"].to_list()


def test_status_from_the_plan_file_lists_batcheval_as_another_table(tmp_path: Path) -> None:
    path = _yaml(tmp_path, batcheval=BATCHEVAL_SECTION)
    assert run(path)["exit_code"] == 0
    snapshot = json.loads((tmp_path / "out" / "tournament.json").read_text())
    Path(snapshot["config_path"]).unlink()
    status = as_json("status", str(tmp_path / "out"))
    assert status["plan_source"] == "plan.parquet" and status["batcheval"] is None
    assert "batcheval" not in {r["stage"] for r in status["rows"]}
    assert {r["table"] for r in status["other_tables"]} == {"batcheval"}
