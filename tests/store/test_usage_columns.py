"""Cache and reasoning token columns: written from usages, null in logs older than them."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from arena.store import USAGE_DETAIL_COLUMNS, RunLog, usage_columns
from arena.store._files import list_parts
from arena.types import Usage
from tests.store.test_store_log import answer, write_rows


def test_usage_columns_sum_counts_and_keep_unreported_ones_null() -> None:
    cols = usage_columns([Usage(100, 10, cache_read_tokens=60), Usage(50, 5, reasoning_tokens=2)])
    assert cols == {
        "tokens_in": 150,
        "tokens_out": 15,
        "usage_estimated": False,
        "tokens_cache_read": 60,
        "tokens_cache_write": None,
        "tokens_reasoning": 2,
    }
    assert usage_columns([])["tokens_cache_read"] is None


def test_rows_with_and_without_the_new_columns_read_together(tmp_path: Path) -> None:
    # A part written without the new columns (an older log), then rows with them.
    old = answer(1)
    write_rows(tmp_path, [("answers", old)], compact_every=1)
    log = RunLog(tmp_path)
    part = list_parts(log.log_dir, "answers")[0][1]
    frame = pl.read_parquet(part).drop(list(USAGE_DETAIL_COLUMNS))
    frame.write_parquet(part)
    new = {**answer(2), **usage_columns([Usage(40, 8, cache_read_tokens=30)])}
    write_rows(tmp_path, [("answers", new)])
    read = log.read("answers").sort("id")
    assert read["tokens_cache_read"].to_list() == [None, 30]
    assert read["tokens_reasoning"].to_list() == [None, None]
