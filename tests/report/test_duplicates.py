"""Reviews read twice are counted once, with one warning (issue 47, item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.report import load_reviews_file

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(leaderboard, [*args, *FAST], catch_exceptions=False)


def _prd_file(folder: Path, name: str, scores: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "".join(json.dumps({"question_id": q, "score": s}) + "\n" for q, s in enumerate(scores, 1))
    )
    return path


def _prd_folder(root: Path) -> Path:
    """A reviewer folder as PRD ships it: originals plus a re-run of one pair under a
    hyphenated name (which sorts first)."""
    folder = root / "ratings-x"
    _prd_file(folder, "answer_m1-vs-answer_m2-x-reviewer_threeclass.jsonl", [1, 1, 1, 2])
    _prd_file(folder, "answer_m2-vs-answer_m1-x-reviewer_threeclass.jsonl", [2, 2, 3, 1])
    _prd_file(folder, "answer-m1-vs-answer-m2-x-reviewer-threeclass.jsonl", [2, 2, 2, 2])
    return folder


def _wins(board: dict[str, Any]) -> dict[str, float]:
    return {m["model"]: m["win_rate"] for m in board["models"]}


def test_a_re_run_file_counts_once_and_the_last_copy_by_default(tmp_path: Path) -> None:
    folder = _prd_folder(tmp_path)
    result = _invoke("--reviews", str(folder))
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert board["counts"]["reviews"] == 8
    (warning,) = [w for w in board["warnings"] if "repeat" in w]
    assert warning.startswith("4 reviews repeat a review already read")
    assert "the last copy" in warning
    assert "answer-m1-vs-answer-m2-x-reviewer-threeclass.jsonl" in warning
    assert "answer_m1-vs-answer_m2-x-reviewer_threeclass.jsonl" in warning
    assert "answer_m2-vs-answer_m1" not in warning  # no repeat there
    # The last copy read is the underscore-named original (the re-run sorts first):
    # m1 wins 3 of 4 there and 2.5 of 4 in the other order.
    assert _wins(board)["m1"] == (3 + 2.5) / 8


def test_first_all_and_error_choose_otherwise(tmp_path: Path) -> None:
    folder = _prd_folder(tmp_path)
    first = json.loads(_invoke("--reviews", str(folder), "--duplicates", "first").output)
    assert first["counts"]["reviews"] == 8
    assert _wins(first)["m1"] == (0 + 2.5) / 8  # the re-run: m2 wins every battle
    assert any("the first copy" in w for w in first["warnings"])
    every = json.loads(_invoke("--reviews", str(folder), "--duplicates", "all").output)
    assert every["counts"]["reviews"] == 12
    assert not any("repeat" in w for w in every.get("warnings", []))
    refused = _invoke("--reviews", str(folder), "--duplicates", "error")
    assert refused.exit_code == 2
    assert "answer-m1-vs-answer-m2-x-reviewer-threeclass.jsonl" in refused.output
    assert "question_id '1'" in refused.output and "read twice" in refused.output


def test_the_same_file_given_twice_counts_once(tmp_path: Path) -> None:
    folder = _prd_folder(tmp_path)
    one = folder / "answer_m2-vs-answer_m1-x-reviewer_threeclass.jsonl"
    notes: list[str] = []
    frame = load_reviews_file([one, one], notes=notes)
    assert frame.height == 4
    (note,) = notes
    assert note.startswith("4 reviews repeat") and str(one) in note
    assert load_reviews_file([one, one], duplicates="all").height == 8


def test_both_games_of_a_pair_are_not_repeats(tmp_path: Path) -> None:
    rows = [
        {
            "question_id": q,
            "model_1": "a",
            "model_2": "b",
            "g1_winner": "model_1",
            "g2_winner": "model_1",
            "judge": ["j", "pair-v2"],
            "turn": turn,
        }
        for q in (1, 2)
        for turn in (1, 2)
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    notes: list[str] = []
    assert load_reviews_file(path, notes=notes).height == 8 and notes == []
    path.write_text(path.read_text() + json.dumps(rows[0]) + "\n")  # a record judged again
    frame = load_reviews_file(path, notes=notes)
    assert frame.height == 8
    assert notes[0].startswith("2 reviews repeat")


def test_human_labels_of_one_battle_are_all_kept(tmp_path: Path) -> None:
    folder = _prd_folder(tmp_path)
    human = tmp_path / "ratings-human"
    _prd_file(human, "answer_m1-vs-answer_m2-human-reviewer_threeclass.jsonl", [1, 1, 1, 2])
    _prd_file(human, "answer-m1-vs-answer-m2-human-reviewer-threeclass.jsonl", [1, 2, 1, 2])
    result = _invoke("--reviews", str(folder), "--human", str(human))
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert not any("ratings-human" in w for w in board["warnings"])
    # Every label counts: m1 wins 5 of the 8 (3 of 4 in one file, 2 of 4 in the other).
    human = board["agreement"]["human_win_rate"]
    assert human["m1"] == 5 / 8
