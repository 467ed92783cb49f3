"""Reading selected columns: only those, latest row per id, across parts and journals."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arena.store import RunLog
from arena.store._files import journal_path, list_parts
from tests.store.test_store_log import answer, review, write_rows


def test_selected_columns_keep_the_latest_row_per_id(tmp_path: Path) -> None:
    # Parts (compacted every 3 rows), then a newer row of a-1 in the live journal.
    rows = [("answers", answer(i)) for i in range(7)]
    rows.append(("answers", answer(2, status="failed", answer_turns=None)))
    write_rows(tmp_path, rows, compact_every=3)
    log = RunLog(tmp_path)
    assert list_parts(log.log_dir, "answers")
    journal_path(log.log_dir, "answers").write_text(
        json.dumps(answer(1, status="invalid", answer_turns=None)) + "\n"
    )
    full = log.read("answers")
    slim = log.read("answers", columns=["status"])
    assert slim.columns == ["id", "status"]
    assert slim.schema["status"] == pl.String
    assert dict(slim.iter_rows()) == dict(full.select("id", "status").iter_rows())
    assert dict(slim.iter_rows())["a-1"] == "invalid"
    assert dict(slim.iter_rows())["a-2"] == "failed"
    # `id` always comes first, whatever the order asked for.
    turns = log.read("answers", columns=["answer_turns", "id"])
    assert turns.columns == ["id", "answer_turns"]
    assert turns.filter(pl.col("id") == "a-3")["answer_turns"].to_list() == [
        ["turn one of 3", "turn two \n with newline, ünïcode"]
    ]


def test_selected_columns_of_an_empty_table_and_unknown_columns(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    empty = log.read("reviews", columns=["verdict", "status"])
    assert empty.columns == ["id", "verdict", "status"] and empty.height == 0
    write_rows(tmp_path, [("reviews", review(1))])
    assert log.read("reviews", columns=["verdict"]).to_dicts() == [{"id": "r-1", "verdict": "A"}]
    with pytest.raises(ValueError, match="no column"):
        log.read("reviews", columns=["verdict", "colour"])
