"""Incremental nightly runs: only new calls run, changed dependencies go stale, removals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from arena.config import DEFAULT_REVIEW_TEMPLATE, load_tournament
from arena.pipeline import build_plan
from arena.report import build_leaderboard, leaderboard_dict
from arena.rundir import PLAN_FILE, classify, plan_frame, read_plan
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.rundir._support import add_model, as_json, edit_yaml, full_size, plan_ids, run


def _assert_ran_exactly(summary: dict[str, Any], new: int, skipped: int) -> None:
    assert summary["exit_code"] == 0, summary
    assert summary["new"] == new and summary["stale"] == 0 and summary["retried"] == 0
    assert summary["completed"] + summary["invalid"] == new
    assert summary["skipped"] == skipped and summary["failed"] == summary["pending"] == 0


def test_adding_a_contestant_a_reviewer_and_a_question_runs_only_new_calls(
    tmp_path: Path,
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    first = run(yaml_path)
    base = full_size(3, 3, 2)
    _assert_ran_exactly(first, base, 0)

    # A contestant (also a reviewer by default): its answers, its battles with
    # every other contestant in both orders judged by all four reviewers, and
    # every old battle judged by it.
    edit_yaml(yaml_path, add_model("m3", 0.5))
    expected = 2 * 1 + 2 * (2 * 3) * 4 + 2 * (3 * 2) * 1
    assert expected == full_size(4, 4, 2) - base
    plan = as_json("plan", str(yaml_path))
    assert plan["total"]["new"] == plan["total"]["pending"] == expected
    _assert_ran_exactly(run(yaml_path), expected, base)

    # A reviewer that does not compete: every battle once more.
    def add_judge(data: dict[str, Any]) -> None:
        data["models"]["judge"] = {"provider": "sim", "sim": {"judge_noise": 0.2}}
        data["reviewers"] = [*data["contestants"], "judge"]

    edit_yaml(yaml_path, add_judge)
    _assert_ran_exactly(run(yaml_path), 2 * 4 * 3, full_size(4, 4, 2))

    # A question: every contestant answers it, every battle on it by 5 reviewers.
    with (tmp_path / "q.jsonl").open("a") as f:
        f.write(json.dumps({"id": "q-new", "text": "A brand new question?"}) + "\n")
    _assert_ran_exactly(run(yaml_path), 4 + 4 * 3 * 5, full_size(4, 5, 2))
    assert run(yaml_path)["completed"] == 0


def test_changed_review_template_makes_every_review_stale_and_reruns_it(
    tmp_path: Path,
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    run(yaml_path)
    _, old_reviews = plan_ids(yaml_path)

    template = tmp_path / "review.txt"
    template.write_text(DEFAULT_REVIEW_TEMPLATE.read_text() + "\nBe strict.\n")
    edit_yaml(yaml_path, lambda d: d.setdefault("review", {}).update(template="review.txt"))
    answers, reviews = plan_ids(yaml_path)
    assert not reviews & old_reviews

    plan = as_json("plan", str(yaml_path))["total"]
    assert (plan["done"], plan["new"], plan["stale"], plan["failed"]) == (6, 0, 36, 0)
    status = as_json("status", str(out))
    by_stage = {r["stage"]: r for r in status["rows"]}
    assert by_stage["reviews"]["stale"] == 36 and by_stage["reviews"]["done"] == 0
    assert by_stage["answers"]["done"] == 6 and by_stage["answers"]["stale"] == 0

    summary = run(yaml_path)
    assert summary["exit_code"] == 0
    assert (summary["stale"], summary["new"], summary["skipped"]) == (36, 0, 6)
    assert summary["completed"] + summary["invalid"] == 36

    # The log keeps both generations; the leaderboard sees only the current one.
    assert RunLog(out).read("reviews").height == 72
    board = leaderboard_dict(build_leaderboard(out))
    assert board["counts"]["reviews"] == 36
    status = as_json("status", str(out))
    assert status["outside_plan"]["reviews"] == {"stale": 36, "unused": 0}
    assert status["total"]["done"] + status["total"]["invalid"] == 42
    assert set(read_plan(out).filter(pl.col("stage") == "reviews")["id"]) == reviews  # type: ignore[union-attr]
    assert set(read_plan(out).filter(pl.col("stage") == "answers")["id"]) == answers  # type: ignore[union-attr]


def test_changed_model_params_make_exactly_its_rows_stale(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    run(yaml_path)
    edit_yaml(yaml_path, lambda d: d["models"]["m1"].update(temperature=0.2))
    t = load_tournament(yaml_path)
    states = classify(plan_frame(t, build_plan(t)), RunLog(tmp_path / "out"))
    stale = states.filter(pl.col("state") == "stale")
    involves_m1 = pl.any_horizontal(
        pl.col(c) == "m1" for c in ("model", "model_a", "model_b", "reviewer")
    ).fill_null(False)
    assert set(stale["id"]) == set(states.filter(involves_m1)["id"])
    assert set(states.filter(~involves_m1)["state"]) == {"done"}
    # m1's 2 answers; 2 questions x (4 ordered pairs with m1 x 3 reviewers
    # + 2 pairs without it judged by m1).
    assert stale.height == 2 + 2 * (4 * 3 + 2)
    summary = run(yaml_path)
    assert summary["stale"] == stale.height and summary["new"] == 0
    assert summary["completed"] + summary["invalid"] == stale.height


def test_removed_model_leaves_the_leaderboard_and_comes_back_without_calls(
    tmp_path: Path,
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    run(yaml_path)
    edit_yaml(yaml_path, lambda d: d.update(contestants=["m0", "m1"]))
    summary = run(yaml_path)
    assert (summary["planned"], summary["skipped"], summary["completed"]) == (12, 12, 0)
    board = leaderboard_dict(build_leaderboard(out))
    assert [m["model"] for m in board["models"]] == ["m0", "m1"]
    assert set(board["reviewer_weights"]) == {"m0", "m1"}
    assert board["counts"]["reviews"] == 2 * 2 * 2
    status = as_json("status", str(out))
    assert status["outside_plan"]["reviews"] == {"stale": 0, "unused": 36 - 8}
    assert (out / PLAN_FILE).is_file()

    edit_yaml(yaml_path, lambda d: d.update(contestants=["m0", "m1", "m2"]))
    summary = run(yaml_path)
    assert (summary["new"], summary["stale"], summary["completed"]) == (0, 0, 0)
    assert summary["skipped"] == summary["planned"] == full_size(3, 3, 2)
    board = leaderboard_dict(build_leaderboard(out))
    assert [m["model"] for m in board["models"]] == ["m0", "m1", "m2"]
    assert board["counts"]["reviews"] == 36
