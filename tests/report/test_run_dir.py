"""Leaderboards of run directories written by the real store."""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl
import pytest

from arena.report import (
    LeaderboardInputError,
    LeaderboardOptions,
    build_leaderboard,
    leaderboard_dict,
    load_run,
)
from tests.rank._frames import frame
from tests.report._support import JSON_KEYS, sample_reviews, write_run

FAST = LeaderboardOptions(elo_orders=5, bootstrap=20, seed=1)


def test_sim_run_shows_true_order_and_kendall_tau(tmp_path: Path) -> None:
    skills = {"m0": 0.1, "m1": 0.5, "m2": 0.9, "m3": 1.3}
    run = write_run(tmp_path / "run", sample_reviews(), contestants=list(skills), skills=skills)
    board = build_leaderboard(run, options=FAST)
    data = leaderboard_dict(board)
    assert set(data) == JSON_KEYS | {"true_order", "kendall_tau", "cost_usd"}
    assert data["true_order"] == ["m3", "m2", "m1", "m0"]
    assert set(data["kendall_tau"]) == {"win_rate", "weighted_win_rate", "elo", "bt"}
    assert data["kendall_tau"]["bt"] > 0.5
    assert data["counts"] == {
        "reviews": sample_reviews().height,
        "invalid": 0,
        "failed": 0,
        "questions": 6,
        "self_excluded": 0,
    }
    assert data["cost_usd"] == pytest.approx(0.001 * sample_reviews().height)


def test_models_left_out_of_the_tournament_leave_the_board(tmp_path: Path) -> None:
    reviews = pl.concat(
        [
            sample_reviews(),
            frame([("q0", "m0", "retired", "m0", "B"), ("q0", "retired", "m1", "m1", "A")]),
        ]
    )
    run = write_run(tmp_path / "run", reviews, contestants=["m0", "m1", "m2", "m3"])
    data = leaderboard_dict(build_leaderboard(run, options=FAST))
    assert {m["model"] for m in data["models"]} == {"m0", "m1", "m2", "m3"}
    assert data["counts"]["reviews"] == sample_reviews().height
    assert "true_order" not in data  # no sim skills in this snapshot


def test_partial_sim_skills_show_no_truth(tmp_path: Path) -> None:
    skills: dict[str, float | None] = {"m0": 1.0, "m1": None, "m2": 2.0, "m3": 3.0}
    run = write_run(tmp_path / "run", sample_reviews(), contestants=list(skills), skills=skills)
    assert "kendall_tau" not in leaderboard_dict(build_leaderboard(run, options=FAST))


def test_failed_and_invalid_rows_from_the_log(tmp_path: Path) -> None:
    reviews = frame(
        [
            ("q1", "m0", "m1", "m0", "A"),
            ("q1", "m1", "m0", "m0", "invalid", "invalid"),
            ("q2", "m0", "m1", "m1", None, "failed"),
            ("q2", "m1", "m0", "m1", "B"),
        ]
    )
    run = write_run(tmp_path / "run", reviews, contestants=["m0", "m1"])
    data = leaderboard_dict(build_leaderboard(run, options=FAST))
    assert data["counts"] == {
        "reviews": 4,
        "invalid": 1,
        "failed": 1,
        "questions": 2,
        "self_excluded": 0,
    }
    assert [m["model"] for m in data["models"]] == ["m0", "m1"]
    assert data["models"][0]["wins"] == 2


def test_run_without_log_yet(tmp_path: Path) -> None:
    run = tmp_path / "fresh"
    run.mkdir()
    (run / "tournament.json").write_text('{"contestants": ["a", "b"], "reviewers": ["a", "b"]}')
    loaded = load_run(run)
    assert loaded.reviews.height == 0
    data = leaderboard_dict(build_leaderboard(run, options=FAST))
    assert [m["model"] for m in data["models"]] == ["a", "b"]
    assert data["models"][0]["bt"] is None
    assert any("no counted battles" in w for w in data["warnings"])


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(LeaderboardInputError, match="not a run directory"):
        build_leaderboard(tmp_path)
    time.sleep(0.2)  # the kernels' size hint runs in a thread: it must create nothing
    assert not (tmp_path / "log").exists()
    (tmp_path / "tournament.json").write_text("{broken")
    with pytest.raises(LeaderboardInputError, match="tournament.json: unreadable"):
        build_leaderboard(tmp_path)
    with pytest.raises(LeaderboardInputError, match="no such"):
        build_leaderboard(tmp_path / "missing")


def test_reviews_file_against_a_run_directory(tmp_path: Path) -> None:
    skills = {"m0": 0.0, "m1": 1.0}
    run = write_run(tmp_path / "run", frame([]), contestants=list(skills), skills=skills)
    path = tmp_path / "outside.csv"
    frame(
        [
            ("q1", "m0", "m1", "ext", "B"),
            ("q1", "m1", "m0", "ext", "A"),
            ("q1", "m1", "other", "ext", "A"),  # not a contestant of the run
        ]
    ).drop("status").write_csv(path)
    board = build_leaderboard(run, reviews_file=path, options=FAST)
    data = leaderboard_dict(board)
    # The run's contestants only; any reviewer.
    assert data["counts"]["reviews"] == 2
    assert data["reviewer_weights"] == {"ext": 1.0}
    assert [m["model"] for m in data["models"]] == ["m1", "m0"]
    assert data["true_order"] == ["m1", "m0"]
    assert "tournament" in board.source
