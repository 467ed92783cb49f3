"""`arena leaderboard --reviews` on native judgment files, and `--baseline`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "20"]


def _invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(leaderboard, list(args), catch_exceptions=False)


def _annotation(
    model: str, instruction: str, preference: float | None, output: str
) -> dict[str, Any]:
    return {
        "instruction": instruction,
        "output_1": "the reference answer",
        "generator_1": "ref",
        "dataset": "helpful_base",
        "output_2": output,
        "generator_2": model,
        "annotator": "weighted_alpaca_eval_gpt4_turbo",
        "preference": preference,
    }


def _annotations(tmp_path: Path) -> Path:
    rows = [
        _annotation("m1", "Q1", 1.8, "abcd"),
        _annotation("m1", "Q2", 1.5, "ab"),
        _annotation("m1", "Q3", 1.0, "abcdef"),
        _annotation("m2", "Q1", 1.2, "x" * 10),
        _annotation("m2", "Q2", 2.0, "x" * 20),
        _annotation("m2", "Q3", None, "x" * 90),
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows, indent=2))
    return path


def test_alpacaeval_annotations_give_its_win_rates(tmp_path: Path) -> None:
    path = _annotations(tmp_path)
    result = _invoke("--reviews", str(path), "--baseline", "ref", "--format", "json", *FAST)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["baseline"] == "ref"
    rows = {row["model"]: row for row in data["vs_baseline"]}
    assert set(rows) == {"m1", "m2"}
    m1, m2 = rows["m1"], rows["m2"]
    # m1: preferences 1.8, 1.5, 1.0 -> shares 0.8, 0.5, 0; discrete win, draw, loss.
    assert m1["win_rate"] == pytest.approx(1.3 / 3)
    assert m1["discrete_win_rate"] == pytest.approx(0.5)
    assert m1["n"] == 3 and m1["avg_length"] == pytest.approx(4.0)
    # m2: 1.2, 2.0 and a missing preference (invalid: not counted).
    assert m2["win_rate"] == pytest.approx(0.6)
    assert m2["discrete_win_rate"] == pytest.approx(0.5)
    assert m2["n"] == 2 and m2["avg_length"] == pytest.approx(15.0)
    assert m1["ci_low"] <= m1["win_rate"] <= m1["ci_high"]
    assert data["counts"] == {
        "reviews": 6,
        "invalid": 1,
        "failed": 0,
        "questions": 3,
        "self_excluded": 0,
    }


def test_baseline_section_in_the_table_and_unknown_baseline(tmp_path: Path) -> None:
    path = _annotations(tmp_path)
    result = _invoke("--reviews", str(path), "--baseline", "ref", "--format", "markdown", *FAST)
    assert result.exit_code == 0, result.output
    assert "Win rate against ref (%)" in result.output and "43.33" in result.output
    result = CliRunner().invoke(leaderboard, ["--reviews", str(path), "--baseline", "nobody"])
    assert result.exit_code == 2
    assert "--baseline 'nobody' is not a contestant" in result.stderr


def _arena_hard(folder: Path) -> Path:
    folder.mkdir(parents=True)
    records = [
        {
            "uid": "u1",
            "model": "m",
            "baseline": "b",
            "judge": "j",
            "category": "hard_prompt",
            "games": [{"score": "A>>B"}, {"score": "B>A"}],
        },
        {
            "uid": "u2",
            "model": "m",
            "baseline": "b",
            "judge": "j",
            "category": "hard_prompt",
            "games": [{"score": "B>>A"}, {"score": "A=B"}],
        },
    ]
    (folder / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


@pytest.mark.parametrize(("weight", "expected"), [("3", 3.5 / 8), ("1", 1.5 / 4)])
def test_arena_hard_folder_with_the_strong_win_weight(
    tmp_path: Path, weight: str, expected: float
) -> None:
    folder = _arena_hard(tmp_path / "model_judgment" / "j")
    result = _invoke(
        "--reviews",
        str(folder),
        "--baseline",
        "b",
        "--strong-win-weight",
        weight,
        "--format",
        "json",
        *FAST,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (row,) = data["vs_baseline"]
    assert row["model"] == "m" and row["win_rate"] == pytest.approx(expected)
    assert row["n"] == 4
    # The pairwise rate and the plain win rate use the same weighted shares.
    assert data["diagnostics"]["pairwise"]["m"]["b"] == pytest.approx(expected)


def test_several_files_and_a_forced_format(tmp_path: Path) -> None:
    base = {"model_1": "x", "model_2": "y", "judge": ["gpt-4", "pair-v2"], "turn": 1}
    first = tmp_path / "one.jsonl"
    first.write_text(
        json.dumps({**base, "question_id": 1, "g1_winner": "model_1", "g2_winner": "model_1"})
        + "\n"
    )
    second = tmp_path / "two.jsonl"
    second.write_text(
        json.dumps({**base, "question_id": 2, "g1_winner": "model_2", "g2_winner": "tie"}) + "\n"
    )
    result = _invoke(
        "--reviews",
        str(first),
        "--reviews",
        str(second),
        "--reviews-format",
        "mt-bench",
        "--format",
        "json",
        *FAST,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["counts"]["reviews"] == 4
    assert data["diagnostics"]["pairwise"]["x"]["y"] == pytest.approx(2.5 / 4)


def test_bad_native_file_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "battles.jsonl"
    path.write_text(
        json.dumps({"question_id": "1", "model_a": "x", "model_b": "y", "winner": "model_a"})
        + "\n"
        + json.dumps({"question_id": "2", "model_a": "x", "model_b": "y", "winner": "draw"})
        + "\n"
    )
    result = CliRunner().invoke(leaderboard, ["--reviews", str(path)])
    assert result.exit_code == 2
    assert f"{path}: line 2: winner: 'draw' is not one of" in result.stderr
