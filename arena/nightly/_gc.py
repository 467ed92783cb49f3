"""`arena gc DIR`: merge each table's Parquet parts into one, archive (or drop) stale rows.

Stale rows are answers and reviews whose logical key is in the plan of the
last run (`DIR/plan.parquet`) under another id: they were made for an older
config and are never reused. Rows of models or questions no longer planned
are kept (a model put back finds its rows again), and so is every row of the
other tables (history, discussions, BatchEval), merged only. Archived rows
go to `DIR/archive/<table>/part-<key>.parquet`; arena never reads them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arena.nightly._planfile import KEYS, read_plan
from arena.store import TABLES, rewrite_tables

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
        .join(
            planned.select(keys).unique().with_columns(_k=pl.lit(True)),
            on=keys,
            how="left",
            maintain_order="left",
        )
        .get_column("_k")
        .is_not_null()
    )
    return key_in_plan & ~in_plan


def _archiver(directory: Path) -> Any:
    def archive(table: str, key: int, frame: pl.DataFrame) -> None:
        folder = directory / ARCHIVE_DIR / table
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"part-{key:020d}.parquet"
        tmp = folder / f".{target.name}.tmp"
        frame.write_parquet(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)

    return archive


def collect_garbage(directory: str | os.PathLike[str], *, drop: bool = False) -> GcReport:
    """Merge DIR's parts and archive (or with `drop`, delete) stale rows; the caller holds
    the run lock. The history table and rows outside the plan are kept."""
    folder = Path(directory)
    plan = read_plan(folder)
    report = GcReport(folder, plan is not None, drop)

    def split(table: str, frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        if plan is None or table not in KEYS or not frame.height:
            return frame, frame.clear()
        stale = _stale_mask(frame, plan, table)
        return frame.filter(~stale), frame.filter(stale)

    done = rewrite_tables(
        folder, sorted(TABLES), split, removed=None if drop else _archiver(folder)
    )
    report.tables = [
        {
            "table": r.table,
            "parts_before": r.parts_before,
            "parts_after": r.parts_after,
            "rows_kept": r.rows_kept,
            "rows_stale": r.rows_removed,
        }
        for r in done
    ]
    return report
