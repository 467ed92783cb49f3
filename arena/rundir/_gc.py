"""`arena gc DIR`: merge each table's Parquet parts into one, archive (or drop) stale rows.

Stale rows are answers and reviews whose logical key is in the plan of the
last run (`DIR/plan.parquet`) under another id: they were made for an older
config and are never reused. Rows of models or questions no longer planned
are kept (a model put back finds its rows again), and so is every row of the
other tables (history, discussions, BatchEval), merged only. Archived rows
go to `DIR/archive/<table>/part-<key>.parquet`; `arena run` puts a call found
there back into the log when its plan needs it again (a rollback does not pay
twice). Before any row leaves the log, the spend of every table, provider and
run goes to the log's spend ledger, so what was spent survives gc
(`RunLog.spent_usd`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arena.rundir._history import HISTORY_TABLE, remember_numbers
from arena.rundir._planfile import KEYS, read_plan
from arena.stages import register_all_tables
from arena.store import TABLES, RunLog
from arena.types import CallStatus

__all__ = [
    "ARCHIVE_DIR",
    "GcReport",
    "collect_garbage",
    "prune_archive",
    "prune_reports",
    "restore_archived",
]

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


def _old_snapshots(frame: pl.DataFrame, keep: int) -> pl.Series:
    """Rows of the history snapshots beyond the newest `keep` (tagged ones are kept)."""
    firsts = frame.group_by("snapshot").agg(pl.col("at").min(), pl.col("tag").first())
    ordered = firsts.sort("at", "snapshot", descending=True)
    old = ordered.slice(keep).filter(pl.col("tag").is_null())["snapshot"]
    return frame["snapshot"].is_in(old.implode())


def collect_garbage(
    directory: str | os.PathLike[str], *, drop: bool = False, keep_history: int | None = None
) -> GcReport:
    """Merge DIR's parts and archive (or with `drop`, delete) stale rows; the caller holds
    the run lock. Rows outside the plan are kept, and the history table unless
    `keep_history` N: then snapshots beyond the newest N (untagged) go as well."""
    folder = Path(directory)
    plan = read_plan(folder)
    report = GcReport(folder, plan is not None, drop)
    RunLog(folder).record_ledger()  # the spend of the rows taken out stays counted
    if keep_history is not None:  # the snapshots kept keep their numbers
        remember_numbers(folder)

    def split(table: str, frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        if table == HISTORY_TABLE and keep_history is not None and frame.height:
            old = _old_snapshots(frame, keep_history)
            return frame.filter(~old), frame.filter(old)
        if plan is None or table not in KEYS or not frame.height:
            return frame, frame.clear()
        stale = _stale_mask(frame, plan, table)
        return frame.filter(~stale), frame.filter(stale)

    register_all_tables()
    from arena.store import rewrite_tables  # asyncio and the rewrite: only gc rewrites

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


def _archived(folder: Path, table: str, ids: pl.DataFrame) -> pl.DataFrame:
    """The archived rows of `table` whose id is in `ids` and that hold a result (ok, or
    invalid for a review), the last archived per id."""
    parts = sorted((folder / ARCHIVE_DIR / table).glob("part-*.parquet"))
    if not parts:
        return pl.DataFrame()
    statuses = [CallStatus.OK.value, CallStatus.INVALID.value]
    found = (
        pl.scan_parquet(parts)
        .join(ids.lazy(), on="id", how="semi")
        .filter(pl.col("status").is_in(statuses))
        .collect()
    )
    return found.unique("id", keep="last", maintain_order=True)


def restore_archived(directory: str | os.PathLike[str], plan: pl.DataFrame) -> dict[str, int]:
    """Put back into DIR's log the archived calls the plan (`plan_frame`) needs and the log
    lacks a result for: a rollback to an older config reuses them instead of paying again.

    The caller holds the run lock. Returns the rows restored per table.
    """
    folder = Path(directory)
    restored: dict[str, int] = {}
    if not (folder / ARCHIVE_DIR).is_dir():
        return restored
    log = RunLog(folder)
    rows: dict[str, pl.DataFrame] = {}
    for table in KEYS:
        wanted = plan.filter(pl.col("stage") == table).select("id")
        settled = log.ids(table, [CallStatus.OK.value, CallStatus.INVALID.value])
        if settled:
            wanted = wanted.filter(~pl.col("id").is_in(list(settled)))
        if not wanted.height:
            continue
        found = _archived(folder, table, wanted)
        if found.height:
            rows[table] = found.select(TABLES[table].names)
            restored[table] = found.height

    import asyncio  # only a restore writes: `arena status` and `plan` load this module too

    async def write() -> None:
        async with log.writer() as writer:
            for table, frame in rows.items():
                await asyncio.gather(*(writer.write(table, row) for row in frame.to_dicts()))

    if rows:
        asyncio.run(write())
    return restored


def prune_reports(directory: str | os.PathLike[str], keep: int) -> list[str]:
    """Delete the report files (JSON and Markdown) of all but the newest `keep` runs of
    DIR (by the run's start, as its report records it); a run still going is kept.
    Returns the run ids deleted."""
    folder = Path(directory) / "reports"
    runs: list[tuple[float, str, Path]] = []
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or "run" not in data:
            continue
        if data.get("exit_code") is None:
            continue  # running (or killed, not yet marked): the next run decides
        record = data.get("record") if isinstance(data.get("record"), dict) else {}
        started = record.get("started_unix") if isinstance(record, dict) else None
        when = float(started) if isinstance(started, int | float) else path.stat().st_mtime
        runs.append((when, path.stem, path))
    runs.sort()
    doomed = runs[: max(0, len(runs) - keep)]
    for _, _, path in doomed:
        path.with_suffix(".md").unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    return [run_id for _, run_id, _ in doomed]


def prune_archive(directory: str | os.PathLike[str], keep: int) -> list[str]:
    """Delete all but the newest `keep` archive parts of each table of DIR/archive/ (a
    rollback to a config older than those pays again; the spend ledger keeps what the
    rows cost). Returns the paths deleted, relative to DIR."""
    root = Path(directory)
    deleted: list[str] = []
    folder = root / ARCHIVE_DIR
    if not folder.is_dir():
        return deleted
    for table in sorted(p for p in folder.iterdir() if p.is_dir()):
        parts = sorted(table.glob("part-*.parquet"))
        for path in parts[: max(0, len(parts) - keep)]:
            path.unlink()
            deleted.append(str(path.relative_to(root)))
    return deleted
