"""A run's log holding one review twice (under two ids): counted once, with one warning."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.report import load_runs
from arena.store import RunLog

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]

# (question, model_a, model_b, verdict, finished_at): m1 beats m2 everywhere, except in
# the re-logged copies of q1 and q2 (ids r-q1b, r-q2b), which finished later and say B.
ROWS = [
    ("r-q1", "q1", "m1", "m2", "A", 10.0),
    ("r-q2", "q2", "m1", "m2", "A", 11.0),
    ("r-q3", "q3", "m1", "m2", "A", 12.0),
    ("r-q4", "q4", "m2", "m1", "B", 13.0),
    ("r-q1b", "q1", "m1", "m2", "B", 20.0),
    ("r-q2b", "q2", "m1", "m2", "B", 21.0),
]


def _run(directory: Path, rows: list[tuple[str, str, str, str, str, float]]) -> Path:
    """A run directory whose log holds `rows` (judge j, no plan file: an older log, or one
    whose rows were copied in), written in an order unlike their finishing order."""
    directory.mkdir(parents=True)
    snapshot = {"name": "t", "config_hash": "x", "contestants": ["m1", "m2"], "reviewers": ["j"]}
    (directory / "tournament.json").write_text(json.dumps(snapshot))

    async def write() -> None:
        async with RunLog(directory).writer() as writer:
            for rid, q, a, b, verdict, done in reversed(rows):
                record: dict[str, Any] = {
                    "id": rid,
                    "status": "ok",
                    "question_id": q,
                    "model_a": a,
                    "model_b": b,
                    "reviewer": "j",
                    "verdict": verdict,
                    "finished_at": done,
                }
                await writer.write("reviews", record)

    asyncio.run(write())
    return directory


def _board(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(leaderboard, [*args, *FAST], catch_exceptions=False)
    if result.exit_code != 0:
        return result.exit_code, result.output
    return 0, json.loads(result.output)


def _win(board: dict[str, Any], model: str) -> float:
    return float(next(m["win_rate"] for m in board["models"] if m["model"] == model))


def test_a_review_logged_twice_counts_once_the_last_finished_copy(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", ROWS)
    code, board = _board(str(run))
    assert code == 0, board
    assert board["counts"]["reviews"] == 4
    (warning,) = [w for w in board["warnings"] if "repeat" in w]
    assert warning.startswith("2 reviews repeat a logged review")
    assert "the last copy of each is counted (--duplicates last" in warning
    assert str(run / "log") in warning
    # The later copies of q1 and q2 count: m1 wins q3 and q4 only.
    assert _win(board, "m1") == 0.5


def test_duplicates_first_all_and_error_on_a_log(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", ROWS)
    code, first = _board(str(run), "--duplicates", "first")
    assert code == 0
    assert first["counts"]["reviews"] == 4
    assert _win(first, "m1") == 1.0  # the first-finished copies: m1 wins all four
    assert any("the first copy" in w for w in first["warnings"])
    code, every = _board(str(run), "--duplicates", "all")
    assert code == 0
    assert every["counts"]["reviews"] == 6
    assert not any("repeat" in w for w in every["warnings"])
    code, output = _board(str(run), "--duplicates", "error")
    assert code == 2
    assert "a review read twice" in output and str(run / "log") in output


def test_a_log_without_repeats_has_no_warning(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", ROWS[:4])
    code, board = _board(str(run))
    assert code == 0
    assert board["counts"]["reviews"] == 4
    assert not any("repeat" in w for w in board["warnings"])
    assert _win(board, "m1") == 1.0


def test_the_coded_and_the_text_reads_find_the_same_repeats(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", ROWS)
    for coded in (True, False):
        notes: list[str] = []
        data = load_runs([run], ranking_only=True, coded=coded, notes=notes)
        assert data.reviews.height == 4, coded
        assert sorted(data.reviews["verdict"].cast(pl.String).to_list()) == ["A", "B", "B", "B"]
        assert len(notes) == 1 and notes[0].startswith("2 reviews repeat"), coded
