"""`arena leaderboard` on a run with discussions: outcomes applied, statistics, both rankings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from arena.config import load_tournament
from arena.discuss import (
    DISCUSSION_REVIEWER,
    TABLE,
    DiscussionState,
    apply_discussions,
    discussion_stats,
    write_state,
)
from arena.engine import run_tournament
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict, render_markdown
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.discuss.test_outcome_stats import DISCUSSED, _reviews

FAST = LeaderboardOptions(bootstrap=0, elo_orders=0)


def _run_dir(tmp: Path, outcome: str, weight: int = 1) -> Path:
    """A run directory holding the constructed reviews and discussions of test_outcome_stats."""
    out = tmp / "run"
    snapshot = {
        "name": "t",
        "contestants": ["x", "y", "z"],
        "reviewers": ["r1", "r2"],
        "models": {},
    }
    out.mkdir(parents=True)
    (out / "tournament.json").write_text(json.dumps(snapshot))

    async def write() -> None:
        async with RunLog(out).writer() as w:
            for row in _reviews().filter(pl.col("reviewer") != "r3").iter_rows(named=True):
                await w.write("reviews", row)
            for row in DISCUSSED.iter_rows(named=True):
                await w.write(TABLE, row)

    asyncio.run(write())
    write_state(out, DiscussionState(context="c1", outcome=outcome, weight=weight, trigger=["tie"]))
    return out


def _wins(board: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {m["model"]: (m["wins"], m["ties"], m["losses"]) for m in board["models"]}


def test_replace_changes_the_leaderboard_and_both_rankings_are_shown(tmp_path: Path) -> None:
    out = _run_dir(tmp_path, "replace")
    board = leaderboard_dict(build_leaderboard(out, options=FAST))
    # q1 and q2 (both orders, both reviewers) now go to x; q3's discussion was unresolved
    # (and the other one of q3 belongs to an old configuration): y keeps those 4
    assert _wins(board)["x"] == (8 + 2, 0, 4) and _wins(board)["y"] == (4 + 2, 0, 8)
    assert [m["model"] for m in board["models"]][:2] == ["x", "y"]
    block = board["discussion"]
    assert (block["outcome"], block["discussions"], block["agreed"], block["unresolved"]) == (
        "replace",
        5,
        4,
        1,
    )
    ranks = {r["model"]: (r["rank"], r["rank_without"]) for r in block["rankings"]}
    assert ranks["x"] == (1, 2) and ranks["y"] == (2, 1)
    assert board["reviewer_weights"].keys() == {"r1", "r2"}
    text = render_markdown(build_leaderboard(out, options=FAST))
    assert "## Discussions" in text and "## Rankings with and without discussion outcomes" in text
    # the footer says plainly what replace did, and that unresolved ones changed nothing
    assert (
        "in each of the 4 agreed discussion(s), two discussants' shared verdict overwrote the "
        "verdicts of every reviewer of that battle; 1 unresolved discussion(s) changed nothing"
    ) in " ".join(text.split())


def test_add_counts_the_weight_as_reviews_by_the_discussion_reviewer(tmp_path: Path) -> None:
    light = leaderboard_dict(build_leaderboard(_run_dir(tmp_path / "a", "add", 1), options=FAST))
    heavy = leaderboard_dict(build_leaderboard(_run_dir(tmp_path / "b", "add", 4), options=FAST))
    assert DISCUSSION_REVIEWER in light["reviewer_weights"]
    assert light["counts"]["reviews"] == 16 + 4 and heavy["counts"]["reviews"] == 16 + 16
    assert [m["model"] for m in light["models"]][0] == "y"
    assert [m["model"] for m in heavy["models"]][0] == "x"
    assert heavy["discussion"]["weight"] == 4
    run_b = tmp_path / "b" / "run"
    text = " ".join(render_markdown(build_leaderboard(run_b, options=FAST)).split())
    assert (
        "Discussions (outcome add): each of the 4 agreed discussion(s) added 4 review(s) by "
        "the reviewer (discussion), next to the reviewers' own; 1 unresolved discussion(s) "
        "changed nothing."
    ) in text


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sim")
    path = small_tournament(
        tmp,
        models=4,
        questions=5,
        sim={"judge_noise": 0.8, "position_bias": 0.5},
        extra={"discussion": {"trigger": ["inconsistent", "tie"], "discussants": ["m0", "m1"]}},
    )
    asyncio.run(run_tournament(load_tournament(path)))
    return tmp / "out"


def test_a_sim_run_ranks_with_its_discussion_outcomes(sim_run: Path) -> None:
    board = leaderboard_dict(build_leaderboard(sim_run, options=FAST))
    log = RunLog(sim_run)
    reviews, table = log.read("reviews"), log.read(TABLE)
    adjusted = apply_discussions(reviews, table, outcome="replace")
    assert not adjusted.equals(reviews)
    wins: dict[str, int] = {}
    for a, b, v in adjusted.select("model_a", "model_b", "verdict").iter_rows():
        if v in ("A", "B"):
            winner = a if v == "A" else b
            wins[winner] = wins.get(winner, 0) + 1
    assert {m["model"]: m["wins"] for m in board["models"]} == wins
    stats = discussion_stats(table).to_json()
    block = board["discussion"]
    for key in ("discussions", "agreed", "unresolved", "models", "triggers"):
        assert block[key] == stats[key]
    assert "kendall_tau_without" in block and "kendall_tau" in board
    assert board["cost_usd"] == 0.0


def test_a_run_without_discussions_has_no_discussion_block(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=2)
    asyncio.run(run_tournament(load_tournament(path)))
    assert "discussion" not in leaderboard_dict(build_leaderboard(tmp_path / "out", options=FAST))


def test_judge_diagnostics_describe_the_reviews_as_written(tmp_path: Path) -> None:
    from arena.report import rank_frame

    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=4,
        extra={
            "discussion": {
                "trigger": ["inconsistent"],
                "discussants": ["m0", "m1"],
                "outcome": "replace",
                "allow_contestants": True,
            }
        },
    )
    data = yaml.safe_load(yaml_path.read_text())
    data["models"]["m2"]["sim"]["position_bias"] = 5.0  # m2 always prefers answer A
    yaml_path.write_text(yaml.safe_dump(data))
    t = load_tournament(yaml_path)
    assert t.model("m2").sim is not None and t.model("m2").sim.position_bias == 5.0
    asyncio.run(run_tournament(t))
    discussed = leaderboard_dict(build_leaderboard(t.output_dir, options=FAST))
    assert discussed["discussion"]["discussions"] > 0
    raw = RunLog(t.output_dir).read("reviews")
    plain = leaderboard_dict(
        rank_frame(
            raw,
            source="raw",
            options=FAST,
            contestants=t.contestants,
            reviewers=t.reviewers,
            answers=RunLog(t.output_dir).read("answers"),
        )
    )
    by_reviewer = {d["reviewer"]: d for d in discussed["diagnostics"]["reviewers"]}
    # the always-A reviewer is still seen as such, though its verdicts were replaced
    assert by_reviewer["m2"]["position_a_share"] == 1.0
    assert discussed["diagnostics"]["reviewers"] == plain["diagnostics"]["reviewers"]
    assert discussed["diagnostics"]["fleiss_kappa"] == plain["diagnostics"]["fleiss_kappa"]
