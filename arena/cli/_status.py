"""`arena status`: where a run directory stands against its tournament's plan."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from arena.cli._common import Exit, fail
from arena.cli._table import box_table
from arena.config import ConfigError
from arena.ops import parse_age
from arena.rundir import STATES, StatusInputError, directory_status
from arena.store import describe_tokens

_COLUMNS = ("stage", "provider", "planned", *STATES, "spent_usd")


@click.command("status")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Tournament YAML to compare against (default: the one DIR's last run used).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option(
    "--max-age",
    "max_age",
    default=None,
    metavar="AGE",
    help="For a monitor: exit 3 when no run of DIR completed (exit 0) within AGE "
    "(e.g. 26h, 90m, 2d), after printing the status.",
)
def status_cmd(
    directory: Path, config_file: Path | None, as_json: bool, max_age: str | None
) -> None:
    """Planned, done, invalid, failed, stale and pending calls of DIR, per stage and provider.

    The plan is the tournament YAML's as it is now (edits since the last run
    show up as stale and pending calls); when that YAML is gone, the plan the
    last run wrote (DIR/plan.parquet). BatchEval batch calls are a stage when
    the YAML is known; discussions, which depend on the reviews, are counted
    as logged, agreed and unresolved. Spend sums cost_usd over every logged
    call, stale ones included, and what `arena gc` took out of the log (its
    spend ledger). Reads only; works while `arena run` writes. With
    --max-age AGE it exits 3 when the last complete run ended longer ago than
    AGE, or no run ever completed.
    """
    limit = None
    if max_age is not None:
        try:
            limit = parse_age(max_age)
        except ValueError as exc:
            fail(f"--max-age: {exc}")
    try:
        status = directory_status(directory, config_file, limit)
    except (StatusInputError, ConfigError) as exc:
        if as_json:  # a monitor still gets an object: the error, the last run, freshness
            click.echo(json.dumps({**_summary(directory, limit), "error": str(exc)}))
        fail(str(exc))
    report, data, source = status.report, status.data, status.source
    if as_json:
        click.echo(json.dumps(data))
        _exit_if_stale(data["freshness"])
        return
    cells = [_cells(row) for row in report.rows]
    cells.append(_cells({"stage": "total", "provider": "", **report.total}))
    title = f"Status of {directory} (plan from {source})"
    click.echo(box_table(title, _COLUMNS, cells, left=("stage", "provider")))
    click.echo(describe_tokens(data["tokens"]))
    jobs = data.get("batch_jobs") or []
    if jobs:
        oldest = max(j["age_seconds"] for j in jobs)
        requests = sum(j["requests"] for j in jobs)
        click.echo(
            f"batch jobs in flight: {len(jobs)} ({requests} requests), "
            f"oldest {oldest / 60:.1f} min (a run adopts and collects them)"
        )
    for stage, rows in report.outside_plan.items():
        if rows["stale"] or rows["unused"]:
            click.echo(
                f"{stage}: {rows['stale']} logged calls are stale (superseded by the "
                f"current plan), {rows['unused']} belong to models or questions no "
                "longer in it; neither is used."
            )
    for line in status.notes:
        click.echo(line)
    for path in data["quarantined"]:
        click.echo(f"quarantined (unreadable, its calls run again): {path}")
    for table, names in data["missing_parts"].items():
        for name in names:
            click.echo(f"deleted: log/{table}/{name} (its calls run again)")
    last = data["last_run"]
    if last is not None and last.get("run_id"):
        click.echo(f"last {last.get('command', 'run')} {last['run_id']}: {_run_state(last)}")
    lock = data.get("lock")
    if lock is not None and lock.get("alive") is False:
        click.echo(
            f"lock: left by pid {lock.get('pid')} on {lock.get('host')}, which is gone "
            "(the kernel released the lock: the next run takes it)"
        )
    elif lock is not None:
        click.echo(f"lock: held by pid {lock.get('pid')} on {lock.get('host')}")
    if last is not None and (last.get("budget_stopped") or last.get("interrupted")):
        why = "stopped by the budget" if last.get("budget_stopped") else "interrupted"
        pending = last.get("pending", (last.get("calls") or {}).get("pending"))
        click.echo(f"last {last.get('command', 'run')}: {why}, {pending} pending")
    for entry in last.get("errors", []) if last is not None else []:
        if entry.get("reason") in ("budget reached", "deferred"):
            from arena.runner import error_lines  # the run machinery: only for these lines

            click.echo(f"last run: {error_lines([entry])[0]}")
    for entry in data["errors"]:
        click.echo(
            f"failed: {entry['count']} call(s) of {entry['model']} on {entry['provider']}: "
            f"{entry['reason']} (e.g. {entry['sample']})"
        )
    for other in report.other_tables:
        click.echo(
            f"{other['table']} ({other['provider']}): rows ok {other['rows_ok']}, "
            f"invalid {other['rows_invalid']}, failed {other['rows_failed']}, "
            f"spent ${other['spent_usd']:.4f}"
        )
    fresh = data["freshness"]
    if fresh["max_age_seconds"] is not None:
        click.echo(
            "last complete run: "
            + ("never" if fresh["last_success_at"] is None else str(fresh["last_success_at"]))
            + ("" if fresh["fresh"] else f": older than --max-age {max_age}")
        )
    _exit_if_stale(fresh)


def _summary(directory: Path, limit: float | None) -> dict[str, Any]:
    from arena.rundir import directory_summary

    try:
        return directory_summary(directory, limit)
    except Exception as exc:  # noqa: BLE001 - the object is printed whatever happens
        return {"directory": str(directory), "last_run": None, "freshness": None, "note": str(exc)}


def _run_state(last: dict[str, Any]) -> str:
    """How the last run stands: its exit, or running (alive or not) with pid and host."""
    started = f"started {last.get('started_at')}"
    if last.get("exit_code") is not None:
        return f"exit {last['exit_code']} ({last.get('exit_meaning')}), {started}"
    where = f"pid {last.get('pid')} on {last.get('host')}"
    alive = last.get("alive")
    if alive is False:
        return f"killed ({where} is gone without an exit code), {started}"
    if alive is None:
        return f"running, no exit yet ({where}: another host, not checked from here), {started}"
    return f"running ({where}), {started}"


def _exit_if_stale(fresh: dict[str, Any]) -> None:
    if not fresh["fresh"]:
        sys.exit(int(Exit.PARTIAL))


def _cells(row: dict[str, Any]) -> list[str]:
    """A status row as table cells."""
    return [f"{row[c]:.4f}" if c == "spent_usd" else str(row[c]) for c in _COLUMNS]
