"""`arena export`: one deduplicated Parquet file per table, journals included, read by duckdb."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest

import arena
from arena.cli._export import export_tables
from tests.viewer._support import PAYLOAD, cli, shared_run

REPORTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "reports.md"


def test_export_every_table_latest_row_per_id(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    run = shared_run(tmp_path_factory)
    result = cli("export", str(run), "--to", str(tmp_path / "x"), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    log = arena.open_log(run)
    tables = {"answers", "reviews", "discussions", "batcheval", "history"}
    assert set(summary["tables"]) == tables
    for table in tables:
        exported = pl.read_parquet(tmp_path / "x" / f"{table}.parquet")
        assert exported["id"].is_unique().all(), table
        assert exported.height == summary["tables"][table] == log.read(table).height
    # The answer rewritten after the run (a second row with the same id): its latest text.
    answers = pl.read_parquet(tmp_path / "x" / "answers.parquet")
    assert answers.filter(pl.col("answer_turns").list.first() == PAYLOAD).height == 1
    text = cli("export", str(run), "--to", str(tmp_path / "y")).output
    assert "reviews: 72 rows ->" in text


def test_export_includes_rows_only_in_the_journal(tmp_path: Path) -> None:
    log = arena.open_log(tmp_path)

    async def write_and_export() -> None:
        async with log.writer() as writer:
            await writer.write("answers", {"id": "a1", "status": "ok", "model": "m0"})
            await writer.write("answers", {"id": "a1", "status": "ok", "model": "m1"})
            # The writer is open: the rows are in the journal, not yet in a part.
            assert (tmp_path / "log" / "answers.journal.jsonl").stat().st_size > 0
            assert not (tmp_path / "log" / "answers").exists()
            assert export_tables(tmp_path, tmp_path / "x") == {"answers": 1}

    asyncio.run(write_and_export())
    assert pl.read_parquet(tmp_path / "x" / "answers.parquet")["model"].to_list() == ["m1"]


def test_the_documented_duckdb_query(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    run = shared_run(tmp_path_factory)
    assert cli("export", str(run), "--to", str(tmp_path / "exports" / "demo")).exit_code == 0
    block = re.search(r"```sql\n(.*?)```", REPORTS_DOC.read_text(), re.S)
    assert block is not None
    query = block.group(1).replace("exports/demo/", f"{tmp_path}/exports/demo/")
    rows = duckdb.sql(query).fetchall()
    reviews = arena.open_log(run).read("reviews")
    decisive = reviews.filter((pl.col("status") == "ok") & pl.col("verdict").is_in(["A", "B"]))
    winners = decisive.select(
        pl.when(pl.col("verdict") == "A").then("model_a").otherwise("model_b").alias("model")
    )["model"].value_counts()
    assert sorted(rows) == sorted(winners.iter_rows())
    assert sum(wins for _, wins in rows) == decisive.height


def test_export_bad_directory(tmp_path: Path) -> None:
    result = cli("export", str(tmp_path), "--to", str(tmp_path / "x"))
    assert result.exit_code == 2 and "not a run directory" in result.output
