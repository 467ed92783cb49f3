"""Rewriting a table of a closed log as one Parquet part (`arena gc`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from arena.store._files import Compactor, fsync_dir, list_parts, list_sealed, parts_dir
from arena.store._log import RunLog

__all__ = ["Rewritten", "rewrite_tables"]


@dataclass(frozen=True)
class Rewritten:
    """One table rewritten: its parts before and after, rows kept and rows taken out."""

    table: str
    parts_before: int
    parts_after: int
    rows_kept: int
    rows_removed: int


async def _recover(directory: Path) -> None:
    async with RunLog(directory).writer():  # seals and compacts every journal, then closes
        pass


def rewrite_tables(
    directory: str | os.PathLike[str],
    tables: list[str],
    split: Callable[[str, pl.DataFrame], tuple[pl.DataFrame, pl.DataFrame]],
    removed: Callable[[str, int, pl.DataFrame], None] | None = None,
) -> list[Rewritten]:
    """Rewrite each table (latest row per id) as one part; the caller holds the run lock.

    `split(table, rows)` returns (rows to keep, rows to take out); `removed`
    gets the taken-out rows (with the new part's key) before any part is
    deleted. The new part is written (temporary name, fsync, rename) with a
    key later than every part before the old parts are deleted, so a crash
    leaves rows twice at worst, which reading tolerates.
    """
    folder = Path(directory)
    asyncio.run(_recover(folder))
    log = RunLog(folder, repair=True)  # a damaged part is moved aside, never deleted
    compactor = Compactor(log.log_dir)
    done: list[Rewritten] = []
    for table in tables:
        old = [path for _, path in list_parts(log.log_dir, table)]
        if not old or list_sealed(log.log_dir, table):
            continue
        keep, out = split(table, log.read(table))
        key = compactor.next_key(table)
        if out.height and removed is not None:
            removed(table, key, out)
        if keep.height:
            compactor.write_part(table, key, keep)
        for path in old:
            path.unlink(missing_ok=True)
        fsync_dir(parts_dir(log.log_dir, table))
        compactor.update_manifest(table, forget=True)  # removed on purpose: not "deleted"
        done.append(Rewritten(table, len(old), 1 if keep.height else 0, keep.height, out.height))
    return done
