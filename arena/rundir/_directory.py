"""Where a run directory stands (`arena status`): the plan's calls, the stages, failures, spend."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arena.config import Tournament
from arena.pipeline import Plan, build_plan
from arena.rundir._files import iso_time, last_success, live_last_run, lock_state
from arena.rundir._planfile import plan_chunks, read_plan
from arena.rundir._runs import load_for_directory, recorded_config
from arena.rundir._status import StatusReport, status_report
from arena.scheduler import jobs_in_flight
from arena.stage import StatusInputs
from arena.stages import all_parts
from arena.store import TABLES, RunLog, failure_reasons, merge_reasons, token_totals

__all__ = ["DirectoryStatus", "StatusInputError", "directory_status", "logged_failures"]

# Plan rows `arena status` classifies at once: a few slices of a million-call plan,
# each a few MB.
STATUS_CHUNK_ROWS = 1 << 17

# The column naming the model that made the calls of the answers and reviews tables.
_MODEL_COLUMNS = {"answers": "model", "reviews": "reviewer"}


class StatusInputError(ValueError):
    """DIR cannot be compared with any plan (not a run directory, no YAML and no plan file)."""


@dataclass
class DirectoryStatus:
    """`arena status DIR`: the JSON, the table's report, and the stages' lines under it."""

    directory: Path
    source: str  # where the plan comes from: "config" or "plan.parquet"
    report: StatusReport
    data: dict[str, Any]  # the documented JSON of `arena status --json`
    notes: list[str] = field(default_factory=list)


def logged_failures(log: RunLog) -> list[dict[str, Any]]:
    """Why the logged calls failed: per provider, model and reason, a count and a sample."""
    columns = dict(_MODEL_COLUMNS)
    for part in all_parts():
        columns.update({t.name: t.model_column for t in part.tables if t.model_column})
    # Only the failed rows, and only what the reasons need: a few parts at a time.
    failed = pl.col("status") == "failed"
    lists = [
        failure_reasons(
            log.read_where(table, failed, ["status", "provider", column, "error"]), column
        )
        for table, column in columns.items()
        if table in TABLES and column in TABLES[table].names
    ]
    return merge_reasons(*lists)


def directory_status(
    directory: Path, config_file: Path | None = None, max_age_seconds: float | None = None
) -> DirectoryStatus:
    """Planned, done, invalid, failed, stale and pending calls of DIR, per stage and provider.

    The plan is the tournament YAML's as it is now (`config_file`, else the one
    DIR's last run recorded); when that YAML is gone, the plan the last run
    wrote (DIR/plan.parquet). Raises StatusInputError when DIR is not a run
    directory or has no plan to compare with, ConfigError for a bad YAML.
    `max_age_seconds` sets `freshness.fresh`: whether the last complete run
    ended within it.
    """
    if not (directory / "log").is_dir():
        raise StatusInputError(f"{directory}: not a run directory (no log/)")
    source = "config"
    t: Tournament | None = None
    plan: Plan | None = None
    frame: pl.DataFrame | Iterator[pl.DataFrame] | None
    if config_file is None and (
        (recorded := recorded_config(directory)) is None or not recorded.is_file()
    ):
        frame = read_plan(directory)
        if frame is None:
            raise StatusInputError(
                f"{directory}: no tournament YAML recorded or found and no plan.parquet; "
                "pass --config FILE"
            )
        source = "plan.parquet"
    else:
        t = load_for_directory(directory, config_file)
        plan = build_plan(t)
        frame = plan_chunks(t, plan, rows=STATUS_CHUNK_ROWS)  # classified a slice at a time
    log = RunLog(directory)
    inputs = StatusInputs(directory, log, t, plan)
    stages = {p.name: p.report.status(inputs) for p in all_parts() if p.report is not None}
    report = status_report(frame, log, stages=stages)
    data: dict[str, Any] = {"directory": str(directory), "plan_source": source, **report.to_json()}
    data["errors"] = logged_failures(log)
    # Damaged parts moved aside, and parts deleted since they were written.
    quarantine = directory / "log" / "quarantine"
    data["quarantined"] = sorted(
        str(p.relative_to(directory)) for p in quarantine.glob("*/*") if p.is_file()
    )
    data["missing_parts"] = log.missing_parts()
    data["last_run"] = live_last_run(directory)
    data["lock"] = lock_state(directory)
    data["tokens"] = token_totals(log)
    data["batch_jobs"] = jobs_in_flight(log)  # batch mode: jobs submitted, not yet collected
    data["freshness"] = _freshness(directory, max_age_seconds)
    notes = [line for st in stages.values() for line in st.notes]
    return DirectoryStatus(directory, source, report, data, notes)


def directory_summary(directory: Path, max_age_seconds: float | None = None) -> dict[str, Any]:
    """What `arena status --json` can say of DIR without its plan (a YAML with an
    error, no plan at all): the last run, as `directory_status` shows it, and the
    freshness of its last complete run."""
    return {
        "directory": str(directory),
        "last_run": live_last_run(directory),
        "lock": lock_state(directory),
        "freshness": _freshness(directory, max_age_seconds),
    }


def _freshness(directory: Path, limit: float | None) -> dict[str, Any]:
    """When DIR's last complete run ended, its age, and whether it is within `limit` s."""
    ended = last_success(directory)
    age = None if ended is None else max(0.0, time.time() - ended)
    return {
        "last_success_at": iso_time(ended),
        "last_success_unix": ended,
        "age_seconds": age,
        "max_age_seconds": limit,
        "fresh": limit is None or (age is not None and age <= limit),
    }
