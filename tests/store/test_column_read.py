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


def test_parts_without_a_newer_column_are_read_together_as_one_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parts of an older log lack `p_a` and `weight`; a newer part has them. Asking for
    # them reads every part in one read (not one part at a time), nulls where absent.
    import arena.store._files as files

    rows = [("reviews", review(i)) for i in range(4)]
    write_rows(tmp_path, rows, compact_every=2)
    log = RunLog(tmp_path)
    for _, part in list_parts(log.log_dir, "reviews"):
        pl.read_parquet(part).drop("p_a", "weight").write_parquet(part)
    write_rows(tmp_path, [("reviews", {**review(9), "p_a": 0.75, "weight": 2.0})], compact_every=1)
    assert len(list_parts(log.log_dir, "reviews")) == 3

    def one_at_a_time(*args: object, **kwargs: object) -> object:
        raise AssertionError("parts read one at a time")

    monkeypatch.setattr(files, "read_part", one_at_a_time)
    read = log.read("reviews", columns=["verdict", "p_a", "weight"])
    assert read.columns == ["id", "verdict", "p_a", "weight"]
    assert read.sort("id")["p_a"].to_list() == [None, None, None, None, 0.75]
    assert [read[c].n_chunks() for c in read.columns] == [1, 1, 1, 1]


def test_a_part_read_alone_reads_only_the_columns_asked_for(tmp_path: Path) -> None:
    from arena.store._files import read_part

    write_rows(tmp_path, [("answers", answer(i)) for i in range(3)], compact_every=3)
    part = list_parts(RunLog(tmp_path).log_dir, "answers")[0][1]
    pl.read_parquet(part).drop("tokens_reasoning").write_parquet(part)
    frame = read_part("answers", part, ["id", "status", "tokens_reasoning"])
    assert frame is not None
    assert frame.columns == ["id", "status", "tokens_reasoning"]
    assert frame["tokens_reasoning"].to_list() == [None, None, None]
