"""The `history` table: one leaderboard snapshot per completed run, and diffs between them."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from arena.store import RunLog, register_table

__all__ = [
    "HISTORY_SCHEMA",
    "HISTORY_TABLE",
    "ModelChange",
    "append_history",
    "diff_snapshots",
    "read_history",
    "snapshot_ids",
    "snapshot_rows",
]

HISTORY_TABLE = "history"

# The per-model rating fields copied from the leaderboard's JSON `models` list.
RATING_FIELDS = (
    "bt",
    "bt_ci_low",
    "bt_ci_high",
    "win_rate",
    "weighted_win_rate",
    "elo",
    "wins",
    "ties",
    "losses",
)

# One row per model per snapshot; the snapshot columns repeat on each of its rows.
HISTORY_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # "<snapshot>:<model>"
        pa.field("snapshot", pa.string()),
        pa.field("at", pa.float64()),  # epoch seconds
        pa.field("command", pa.string()),  # "run" | "retry-failed"
        pa.field("config_hash", pa.string()),
        pa.field("n_models", pa.int64()),
        pa.field("n_questions", pa.int64()),
        pa.field("reviews", pa.int64()),  # reviews counted as battles
        pa.field("invalid", pa.int64()),
        pa.field("failed", pa.int64()),
        pa.field("calls_planned", pa.int64()),  # answers and reviews of the plan
        pa.field("calls_open", pa.int64()),  # of which failed, stale or pending
        pa.field("model", pa.string()),
        pa.field("rank", pa.int64()),  # 1 = best, by bt as in the leaderboard
        pa.field("bt", pa.float64()),
        pa.field("bt_ci_low", pa.float64()),
        pa.field("bt_ci_high", pa.float64()),
        pa.field("win_rate", pa.float64()),
        pa.field("weighted_win_rate", pa.float64()),
        pa.field("elo", pa.float64()),
        pa.field("wins", pa.float64()),
        pa.field("ties", pa.float64()),
        pa.field("losses", pa.float64()),
    ]
)

register_table(HISTORY_TABLE, HISTORY_SCHEMA)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def snapshot_rows(
    leaderboard: Mapping[str, Any],
    *,
    command: str,
    config_hash: str,
    n_questions: int,
    calls_planned: int,
    calls_open: int,
    at: float | None = None,
) -> list[dict[str, Any]]:
    """History rows of one leaderboard (its `--format json` shape), in rank order."""
    snapshot = uuid.uuid4().hex[:12]
    models = list(leaderboard.get("models", []))
    counts = leaderboard.get("counts", {})
    common: dict[str, Any] = {
        "snapshot": snapshot,
        "at": time.time() if at is None else at,
        "command": command,
        "config_hash": config_hash,
        "n_models": len(models),
        "n_questions": n_questions,
        "reviews": int(counts.get("reviews", 0)),
        "invalid": int(counts.get("invalid", 0)),
        "failed": int(counts.get("failed", 0)),
        "calls_planned": calls_planned,
        "calls_open": calls_open,
    }
    rows: list[dict[str, Any]] = []
    for rank, entry in enumerate(models, 1):
        row = dict(common, id=f"{snapshot}:{entry['model']}", model=str(entry["model"]), rank=rank)
        row.update({k: _float(entry.get(k)) for k in RATING_FIELDS})
        rows.append(row)
    return rows


async def _write(directory: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    async with RunLog(directory).writer() as writer:
        await asyncio.gather(*(writer.write(HISTORY_TABLE, row) for row in rows))


def append_history(directory: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    """Append a snapshot's rows to DIR's history table (the caller holds the run lock)."""
    if rows:
        asyncio.run(_write(directory, rows))


def read_history(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """Every snapshot of DIR, oldest first, models in rank order."""
    return RunLog(directory).read(HISTORY_TABLE).sort("at", "snapshot", "rank")


@dataclass(frozen=True)
class ModelChange:
    """How one model moved between two snapshots (None where it is absent)."""

    model: str
    rank_before: int | None
    rank_after: int | None
    bt_before: float | None
    bt_after: float | None

    @property
    def status(self) -> str:
        """'new', 'dropped' or 'kept'."""
        if self.rank_before is None:
            return "new"
        if self.rank_after is None:
            return "dropped"
        return "kept"

    @property
    def rank_move(self) -> int | None:
        """Places gained (positive = moved up)."""
        if self.rank_before is None or self.rank_after is None:
            return None
        return self.rank_before - self.rank_after

    @property
    def bt_change(self) -> float | None:
        """Rating change on the Bradley-Terry scale."""
        if self.bt_before is None or self.bt_after is None:
            return None
        return self.bt_after - self.bt_before

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "model": self.model,
            "status": self.status,
            "rank_before": self.rank_before,
            "rank_after": self.rank_after,
            "rank_move": self.rank_move,
            "bt_before": self.bt_before,
            "bt_after": self.bt_after,
            "bt_change": self.bt_change,
        }


def snapshot_ids(history: pl.DataFrame) -> list[str]:
    """Snapshot ids, oldest first."""
    firsts = history.group_by("snapshot").agg(pl.col("at").min()).sort("at", "snapshot")
    return [str(s) for s in firsts["snapshot"].to_list()]


def diff_snapshots(history: pl.DataFrame, before: str, after: str) -> list[ModelChange]:
    """Per-model changes from snapshot `before` to `after`: `after`'s order, dropped ones last."""
    old_rows = history.filter(pl.col("snapshot") == before).iter_rows(named=True)
    old = {r["model"]: r for r in old_rows}
    new = history.filter(pl.col("snapshot") == after).sort("rank")
    changes: list[ModelChange] = []
    for r in new.iter_rows(named=True):
        prev = old.get(r["model"])
        changes.append(
            ModelChange(
                r["model"],
                None if prev is None else prev["rank"],
                r["rank"],
                None if prev is None else prev["bt"],
                r["bt"],
            )
        )
    seen = set(new["model"].to_list())
    for model, prev in sorted(old.items(), key=lambda item: item[1]["rank"]):
        if model not in seen:
            changes.append(ModelChange(model, prev["rank"], None, prev["bt"], None))
    return changes
