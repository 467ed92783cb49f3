"""`arena gc DIR`: merge each table's Parquet parts into one, archive (or drop) stale rows.

Stale rows are answers and reviews whose logical key is in the plan of the
last run (`DIR/plan.parquet`) under another id: they were made for an older
config and are never reused. Rows of models or questions no longer planned
are kept (a model put back finds its rows again), and so is every row of the
other tables (history, discussions, BatchEval), merged only. Archived rows
go to `DIR/archive/<table>/part-<key>.parquet`; arena never reads them.

Crash safety: the merged part is written (temporary name, fsync, rename)
with a key later than every part before the old parts are deleted, so a
crash in between leaves rows twice, which reading tolerates (the last row
per id wins, and both copies are the same).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arena.nightly._planfile import KEYS, read_plan
from arena.store import TABLES, RunLog
from arena.store._files import Compactor, fsync_dir, list_parts, list_sealed, parts_dir

__all__ = ["ARCHIVE_DIR", "GcReport", "collect_garbage"]

ARCHIVE_DIR = "archive"


@dataclass
class GcReport:
    """What `collect_garbage` did, per table."""

    directory: Path
    plan: bool  # a plan file was found (else nothing counts as stale)
    drop: bool
    tables: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data."""
        total = {
            k: sum(int(t[k]) for t in self.tables)
            for k in ("parts_before", "parts_after", "rows_kept", "rows_stale")
        }
        return {
            "directory": str(self.directory),
            "plan": self.plan,
            "stale_rows": "dropped" if self.drop else "archived",
            "tables": self.tables,
            "total": total,
        }


def _stale_mask(frame: pl.DataFrame, plan: pl.DataFrame, table: str) -> pl.Series:
    keys = list(KEYS[table])
    planned = plan.filter(pl.col("stage") == table)
    in_plan = frame["id"].is_in(planned["id"].implode())
    key_in_plan = (
        frame.select(keys)
        .join(planned.select(keys).unique().with_columns(_k=pl.lit(True)), on=keys, how="left")
        .get_column("_k")
        .is_not_null()
    )
    return key_in_plan & ~in_plan


def _archive(directory: Path, table: str, key: int, frame: pl.DataFrame) -> None:
    folder = directory / ARCHIVE_DIR / table
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"part-{key:020d}.parquet"
    tmp = folder / f".{target.name}.tmp"
    frame.write_parquet(tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, target)
    fsync_dir(folder)


async def _recover(directory: Path) -> None:
    """Seal and compact every journal (what a writer does on opening), then close."""
    async with RunLog(directory).writer():
        pass


def collect_garbage(directory: str | os.PathLike[str], *, drop: bool = False) -> GcReport:
    """Merge DIR's parts and archive (or with `drop`, delete) stale rows; the caller holds
    the run lock. The history table and rows outside the plan are kept."""
    folder = Path(directory)
    asyncio.run(_recover(folder))
    log = RunLog(folder)
    plan = read_plan(folder)
    report = GcReport(folder, plan is not None, drop)
    compactor = Compactor(log.log_dir)
    for table in sorted(TABLES):
        old_parts = [path for _, path in list_parts(log.log_dir, table)]
        if not old_parts or list_sealed(log.log_dir, table):
            continue
        frame = log.read(table)
        stale = pl.Series([False] * frame.height)
        if plan is not None and table in KEYS and frame.height:
            stale = _stale_mask(frame, plan, table)
        keep = frame.filter(~stale)
        gone = frame.filter(stale)
        key = compactor.next_key(table)
        if gone.height and not drop:
            _archive(folder, table, key, gone)
        new_parts = 0
        if keep.height:
            compactor.write_part(table, key, keep)
            new_parts = 1
        for path in old_parts:
            path.unlink(missing_ok=True)
        fsync_dir(parts_dir(log.log_dir, table))
        report.tables.append(
            {
                "table": table,
                "parts_before": len(old_parts),
                "parts_after": new_parts,
                "rows_kept": keep.height,
                "rows_stale": gone.height,
            }
        )
    return report
