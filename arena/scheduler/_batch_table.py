"""The `batch_jobs` and `batch_logged` log tables of batch mode, and what `arena status` reads.

`batch_jobs` holds a row per job intent (latest state wins: intent,
submitted, collected, void); `batch_logged` a row per request of a job whose
result is being logged (its id is the request's custom id), written just
before the result's rows and naming them (table, row ids, run): after a kill
-9 a later run checks that those rows are there before it counts the result
as logged. A job is collected once every request it executed is logged.

Apart from the dispatcher (`arena.scheduler._batching`): `arena status` reads
the tables without loading asyncio and the providers' batch clients.
"""

from __future__ import annotations

import json
import time
from typing import Any

import polars as pl

from arena.store import Column, RunLog, TableSchema, register_table

__all__ = [
    "BATCH_LOGGED_SCHEMA",
    "BATCH_LOGGED_TABLE",
    "BATCH_SCHEMA",
    "BATCH_TABLE",
    "OPEN_STATES",
    "jobs_in_flight",
]

BATCH_TABLE = "batch_jobs"
BATCH_SCHEMA = TableSchema(
    [
        Column("id", pl.String, nullable=False),  # the intent id
        Column("provider", pl.String),
        Column("model", pl.String),
        Column("state", pl.String),  # intent, submitted, collected, void, gone
        Column("job_id", pl.String),
        Column("custom_ids", pl.String),  # JSON list
        Column("tags", pl.String),  # JSON object
        Column("created_at", pl.Float64),  # epoch seconds of the intent
        Column("updated_at", pl.Float64),
        Column("run_id", pl.String),
        # Who owns the job: a digest of the API type, endpoint and key (never the key).
        Column("account", pl.String),
    ]
)
register_table(BATCH_TABLE, BATCH_SCHEMA)

BATCH_LOGGED_TABLE = "batch_logged"
BATCH_LOGGED_SCHEMA = TableSchema(
    [
        Column("id", pl.String, nullable=False),  # the request's custom id
        Column("intent", pl.String),  # the intent id of its job
        Column("run_id", pl.String),  # the run that logged its result
        Column("table", pl.String),  # the table of its result's rows
        Column("rows", pl.String),  # JSON list of their ids
        Column("logged_at", pl.Float64),
    ]
)
register_table(BATCH_LOGGED_TABLE, BATCH_LOGGED_SCHEMA)

# States of an intent whose job is not collected yet (a run adopts it).
OPEN_STATES = ("intent", "submitted")


def jobs_in_flight(log: RunLog, now: float | None = None) -> list[dict[str, Any]]:
    """The batch jobs of a log not yet collected (`arena status`), oldest first, with their age.

    `requests` counts those of a job whose result is not logged yet.
    """
    now = time.time() if now is None else now
    jobs = log.read(BATCH_TABLE).filter(pl.col("state").is_in(OPEN_STATES))
    if not jobs.height:
        return []
    logged = set(log.read(BATCH_LOGGED_TABLE, columns=["id"])["id"].to_list())
    return [
        {
            "provider": row["provider"],
            "model": row["model"],
            "job_id": row["job_id"],
            "state": row["state"],
            "requests": sum(1 for c in json.loads(row["custom_ids"]) if c not in logged),
            "age_seconds": max(0.0, now - row["created_at"]),
        }
        for row in jobs.sort("created_at").iter_rows(named=True)
    ]
