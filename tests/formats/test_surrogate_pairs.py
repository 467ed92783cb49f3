"""JSON files with escaped surrogates: pairs (emoji) read as text, a lone half is bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.formats import FormatError
from arena.formats._records import read_records


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("array", [True, False])
def test_escaped_pairs_read_as_the_characters(tmp_path: Path, array: bool) -> None:
    rows = [{"instruction": "smile \U0001f600", "output": "ok \\ud800 literal"}] * 3
    body = json.dumps(rows) if array else "\n".join(json.dumps(r) for r in rows)
    assert "\\ud83d\\ude00" in body  # ensure_ascii escapes the emoji as a pair
    records = read_records(_write(tmp_path / "a.json", body))
    assert [r["instruction"] for _, r in records] == ["smile \U0001f600"] * 3
    assert records[0][1]["output"] == "ok \\ud800 literal"


@pytest.mark.parametrize(
    ("escaped", "field"),
    [
        ("\\ud83d", "high"),  # a high half alone
        ("\\ude00", "low"),  # a low half alone
        ("\\\\ud800\\udc00", "after a literal"),  # the "high" is text: the low is alone
        ("\\ud83d\\ud83d\\ude00", "twice"),  # two highs, one low
    ],
)
def test_a_lone_half_is_refused_with_its_record(tmp_path: Path, escaped: str, field: str) -> None:
    good = json.dumps({"output": "fine \U0001f600"})
    bad = '{"output": "x' + escaped + '"}'
    path = _write(tmp_path / "b.json", f"[{good}, {good}, {bad}]")
    with pytest.raises(FormatError) as caught:
        read_records(path)
    assert "[2]: output" in str(caught.value), field
    assert "lone surrogate" in str(caught.value)
