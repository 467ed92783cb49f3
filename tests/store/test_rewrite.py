"""`rewrite_tables`: one part per table, rows taken out handed over first (`arena gc`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl

from arena.store import RunLog, rewrite_tables
from arena.store._files import list_parts
from tests.store.test_store_log import answer


def _write(log: RunLog, rows: list[dict[str, object]]) -> None:
    async def go() -> None:
        async with log.writer() as w:
            for row in rows:
                await w.write("answers", row)

    asyncio.run(go())


def test_rewrite_merges_parts_and_hands_over_the_rows_taken_out(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    _write(log, [answer(i) for i in range(4)])
    _write(log, [answer(1, status="failed", error="boom"), answer(9)])  # a later row wins
    assert len(list_parts(log.log_dir, "answers")) == 2
    taken: list[pl.DataFrame] = []

    def split(table: str, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        out = rows["id"].is_in(["a-0", "a-2"])
        return rows.filter(~out), rows.filter(out)

    done = rewrite_tables(
        tmp_path, ["answers", "reviews"], split, lambda t, key, rows: taken.append(rows)
    )
    assert [
        (r.table, r.parts_before, r.parts_after, r.rows_kept, r.rows_removed) for r in done
    ] == [("answers", 2, 1, 3, 2)]  # reviews has no part: untouched
    assert len(list_parts(log.log_dir, "answers")) == 1
    rows = log.read("answers")
    assert sorted(rows["id"].to_list()) == ["a-1", "a-3", "a-9"]
    assert rows.filter(pl.col("id") == "a-1")["status"].to_list() == ["failed"]
    assert sorted(taken[0]["id"].to_list()) == ["a-0", "a-2"]
