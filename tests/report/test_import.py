"""Importing judgments: each file format, and each bad-input case."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arena.report import LeaderboardInputError, load_reviews_file

ROWS = [
    {"question_id": 1, "model_a": "X", "model_b": "Y", "reviewer": "J", "score": -1},
    {"question_id": 1, "model_a": "Y", "model_b": "X", "reviewer": "J", "score": 1},
    {"question_id": 2, "model_a": "X", "model_b": "Y", "reviewer": "K", "score": 0},
]
EXPECTED = ["A", "B", "tie"]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    frame = pl.DataFrame(rows)
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif path.suffix == ".csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_each_format_with_scores(tmp_path: Path, suffix: str) -> None:
    frame = load_reviews_file(_write(tmp_path / f"r{suffix}", ROWS))
    assert frame["verdict"].to_list() == EXPECTED
    assert frame["question_id"].to_list() == ["1", "1", "2"]
    assert frame["model_a"].to_list() == ["X", "Y", "X"]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_each_format_with_verdicts(tmp_path: Path, suffix: str) -> None:
    rows = [
        {**{k: v for k, v in r.items() if k != "score"}, "verdict": v, "note": "x"}
        for r, v in zip(ROWS, ["a", "B", "TIE"], strict=True)
    ]
    frame = load_reviews_file(_write(tmp_path / f"r{suffix}", rows))
    assert frame["verdict"].to_list() == EXPECTED
    assert "note" not in frame.columns  # extra columns are ignored


def test_score_wins_over_verdict_and_floats_are_fine(tmp_path: Path) -> None:
    rows = [{**r, "score": float(r["score"]), "verdict": "A"} for r in ROWS]  # type: ignore[arg-type]
    assert load_reviews_file(_write(tmp_path / "r.csv", rows))["verdict"].to_list() == EXPECTED


def test_mixed_types_in_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"question_id": 1, "model_a": "X", "model_b": "Y", "reviewer": "J", "score": -1}\n'
        '{"question_id": "q2", "model_a": "X", "model_b": "Y", "reviewer": "J", "score": "1"}\n'
    )
    frame = load_reviews_file(path)
    assert frame["question_id"].to_list() == ["1", "q2"]
    assert frame["verdict"].to_list() == ["A", "B"]


def _bad(tmp_path: Path, suffix: str, rows: list[dict[str, object]]) -> str:
    with pytest.raises(LeaderboardInputError) as info:
        load_reviews_file(_write(tmp_path / f"bad{suffix}", rows))
    return str(info.value)


@pytest.mark.parametrize(
    ("suffix", "where"), [(".jsonl", "line 2"), (".csv", "line 3"), (".parquet", "row 2")]
)
def test_unknown_score_names_the_row(tmp_path: Path, suffix: str, where: str) -> None:
    rows = [dict(ROWS[0]), {**ROWS[1], "score": 2}]
    message = _bad(tmp_path, suffix, rows)
    assert where in message and "unknown score 2" in message


def test_unknown_verdict_names_the_line(tmp_path: Path) -> None:
    rows = [
        {**{k: v for k, v in ROWS[0].items() if k != "score"}, "verdict": v} for v in ("A", "maybe")
    ]
    message = _bad(tmp_path, ".jsonl", rows)
    assert "line 2" in message and "unknown verdict 'maybe'" in message


def test_missing_column(tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "reviewer"} for r in ROWS]
    assert "column 'reviewer'" in _bad(tmp_path, ".csv", rows)
    rows = [{k: v for k, v in r.items() if k != "score"} for r in ROWS]
    assert "score or verdict" in _bad(tmp_path, ".csv", rows)


def test_missing_value_names_the_row(tmp_path: Path) -> None:
    rows = [dict(ROWS[0]), {**ROWS[1], "model_b": None}]
    message = _bad(tmp_path, ".jsonl", rows)
    assert "line 2" in message and "missing model_b" in message
    rows = [dict(ROWS[0]), {**ROWS[1], "score": None}]
    assert "line 3: missing score" in _bad(tmp_path, ".csv", rows)


def test_self_battle_names_the_row(tmp_path: Path) -> None:
    rows = [dict(ROWS[0]), {**ROWS[1], "model_b": "Y"}]
    assert "line 2: model 'Y' against itself" in _bad(tmp_path, ".jsonl", rows)


def test_empty_files(tmp_path: Path) -> None:
    for name, text in (("e.jsonl", ""), ("e.csv", ""), ("h.csv", "question_id,model_a\n")):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(LeaderboardInputError, match="no reviews"):
            load_reviews_file(path)
    empty = tmp_path / "e.parquet"
    pl.DataFrame(schema={"question_id": pl.String}).write_parquet(empty)
    with pytest.raises(LeaderboardInputError, match="no reviews"):
        load_reviews_file(empty)


def test_broken_json_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n")
    with pytest.raises(LeaderboardInputError, match="line 2, column 2: invalid JSON"):
        load_reviews_file(path)


def test_unknown_type_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("x")
    with pytest.raises(LeaderboardInputError, match="unknown file type"):
        load_reviews_file(tmp_path / "r.txt")
    with pytest.raises(LeaderboardInputError, match="no such file"):
        load_reviews_file(tmp_path / "nope.csv")
