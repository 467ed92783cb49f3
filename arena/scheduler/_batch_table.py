"""The `batch_jobs` log table of batch mode, and what `arena status` reads of it.

Apart from the dispatcher (`arena.scheduler._batching`): `arena status` reads
the table without loading asyncio and the providers' batch clients.
"""

from __future__ import annotations

import json
import time
from typing import Any

import polars as pl

from arena.store import Column, RunLog, TableSchema, register_table

__all__ = ["BATCH_SCHEMA", "BATCH_TABLE", "jobs_in_flight"]

BATCH_TABLE = "batch_jobs"
BATCH_SCHEMA = TableSchema(
    [
        Column("id", pl.String, nullable=False),  # the intent id
        Column("provider", pl.String),
        Column("model", pl.String),
        Column("state", pl.String),  # intent, submitted, ended, void, collected
        Column("job_id", pl.String),
        Column("custom_ids", pl.String),  # JSON list
        Column("tags", pl.String),  # JSON object
        Column("created_at", pl.Float64),  # epoch seconds of the intent
        Column("updated_at", pl.Float64),
        Column("run_id", pl.String),
    ]
)
register_table(BATCH_TABLE, BATCH_SCHEMA)


def jobs_in_flight(log: RunLog, now: float | None = None) -> list[dict[str, Any]]:
    """The batch jobs of a log not yet collected (`arena status`), oldest first, with their age."""
    now = time.time() if now is None else now
    rows = log.read(BATCH_TABLE).sort("created_at").iter_rows(named=True)
    return [
        {
            "provider": row["provider"],
            "model": row["model"],
            "job_id": row["job_id"],
            "state": row["state"],
            "requests": len(json.loads(row["custom_ids"])),
            "age_seconds": max(0.0, now - row["created_at"]),
        }
        for row in rows
        if row["state"] in ("intent", "submitted")
    ]
