"""AlpacaEval annotation files read as columns give exactly what the record reader gives,
and every value that reader refuses is still refused with its record and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.report import load_reviews_file

BASE = "base_model"


def _record(model: str, question: int, preference: Any, **extra: Any) -> dict[str, Any]:
    return {
        "instruction": f"  Question {question}  ",
        "output_1": "the baseline's answer 😀",
        "generator_1": BASE,
        "output_2": f"{model}'s **answer** to {question}",
        "generator_2": model,
        "annotator": "judge",
        "preference": preference,
        "dataset": "helpful_base",
        "raw_completion": {"logprobs": {"content": [{"token": "m", "top": [1, 2]}]}},
        **extra,
    }


def _write(path: Path, records: list[dict[str, Any]], raw: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw if raw is not None else json.dumps(records, indent=2))
    return path


def test_a_clean_file_reads_every_rule(tmp_path: Path) -> None:
    records = [
        _record("m1", 1, 1.8),
        _record("m1", 2, 0),  # AlpacaEval's older draw code
        _record("m1", 3, float("nan")),  # a failed annotation: invalid
        _record("m1", 4, 1.25, input="  more context "),
        _record("m1", 5, 2, annotator=""),
        {**_record("m1", 6, 1.5), "generator_2": BASE},  # the baseline against itself
        _record("m1", 7, 1.0, output_2="true"),  # an answer may be the word "true"
    ]
    # NaN is not JSON: written as AlpacaEval's pandas writes it.
    text = json.dumps(records).replace("NaN", "null")
    notes: list[str] = []
    frame = load_reviews_file(_write(tmp_path / "a.json", [], text), notes=notes)
    rows = frame.sort("question_id").select(
        "question_id", "model_a", "model_b", "reviewer", "verdict", "p_a", "category"
    )
    assert rows.rows() == [
        ("Question 1", BASE, "m1", "judge", "B", pytest.approx(0.2), "helpful_base"),
        ("Question 2", BASE, "m1", "judge", "tie", 0.5, "helpful_base"),
        ("Question 3", BASE, "m1", "judge", "invalid", None, "helpful_base"),
        ("Question 4\n\nmore context", BASE, "m1", "judge", "A", 0.75, "helpful_base"),
        ("Question 5", BASE, "m1", "alpacaeval", "B", 0.0, "helpful_base"),
        ("Question 7", BASE, "m1", "judge", "A", 1.0, "helpful_base"),
    ]
    lengths = frame.sort("question_id")["length_b"].to_list()
    assert lengths[-1] == 4.0 and lengths[0] == len("m1's **answer** to 1")
    assert frame.sort("question_id")["bold_b"].to_list() == [1.0] * 5 + [0.0]
    assert any("against itself" in note for note in notes)


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"generator_2": True}, "generator_2", "true/false"),
        ({"generator_2": ["m1"]}, "generator_2", "a list"),
        ({"instruction": {"text": "q"}}, "instruction", "an object"),
        ({"preference": True}, "preference", "true/false"),
        ({"preference": 2.5}, "preference", "outside [1, 2]"),
        ({"generator_1": "   "}, "generator_1", "missing"),
    ],
)
def test_values_the_record_reader_refuses_are_refused(
    tmp_path: Path, change: dict[str, Any], field: str, problem: str
) -> None:
    records = [_record("m1", 1, 1.8), _record("m1", 2, 1.2), {**_record("m1", 3, 1.5), **change}]
    path = _write(tmp_path / "bad.json", records)
    result = CliRunner().invoke(leaderboard, [str(path), "--format", "json"])
    assert result.exit_code == 2
    assert str(path) in result.output and f"[2]: {field}" in result.output
    assert problem in result.output


def test_a_lone_surrogate_is_refused_and_a_pair_kept(tmp_path: Path) -> None:
    good = json.dumps([_record("m1", 1, 1.8), _record("m1", 2, 1.2)])  # 😀 as a pair
    assert "\\ud83d\\ude00" in good
    frame = load_reviews_file(_write(tmp_path / "ok.json", [], good))
    assert frame.height == 2
    bad = good.replace("Question 2", "Question \\ud800 2")
    path = _write(tmp_path / "lone.json", [], bad)
    result = CliRunner().invoke(leaderboard, [str(path), "--format", "json"])
    assert result.exit_code == 2 and "surrogate" in result.output and "[1]" in result.output


def test_numbers_written_as_text_read_as_the_record_reader_reads_them(tmp_path: Path) -> None:
    records = [_record("m1", 1, "1.8"), _record("m1", 2, 1.2)]
    frame = load_reviews_file(_write(tmp_path / "text.json", records))
    assert sorted(frame["p_a"].to_list()) == pytest.approx([0.2, 0.8])


def test_many_files_read_side_by_side_in_order(tmp_path: Path) -> None:
    files = [
        _write(
            tmp_path / f"m{k}" / "annotations.json", [_record(f"m{k}", q, 1.9) for q in range(3)]
        )
        for k in range(5)
    ]
    frame = load_reviews_file(files)
    assert frame["model_b"].unique(maintain_order=True).to_list() == [f"m{k}" for k in range(5)]
    assert frame.schema["length_a"] == pl.Float64
