"""`arena status`: where a run directory stands against its tournament's plan."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.cli._common import Exit, fail
from arena.config import ConfigError, Tournament
from arena.discuss import discussion_context, load_templates, read_state
from arena.engine import LAST_RUN
from arena.nightly import (
    STATES,
    batcheval_states,
    iso_time,
    last_success,
    load_for_directory,
    parse_age,
    plan_frame,
    read_plan,
    recorded_config,
    status_report,
)
from arena.pipeline import Plan, build_plan
from arena.runner import error_lines
from arena.sampling import design_status
from arena.store import (
    TABLES,
    RunLog,
    describe_tokens,
    failure_reasons,
    merge_reasons,
    token_totals,
)

_COLUMNS = ("stage", "provider", "planned", *STATES, "spent_usd")
# The column naming the model that made each table's calls.
_MODEL_COLUMNS = {
    "answers": "model",
    "reviews": "reviewer",
    "discussions": "speaker",
    "batcheval": "scorer",
}


def logged_failures(log: RunLog) -> list[dict[str, Any]]:
    """Why the logged calls failed: per provider, model and reason, a count and a sample."""
    lists = [
        failure_reasons(log.read(table), column)
        for table, column in _MODEL_COLUMNS.items()
        if table in TABLES
    ]
    return merge_reasons(*lists)


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
    if not (directory / "log").is_dir():
        fail(f"{directory}: not a run directory (no log/)")
    source = "config"
    batcheval = None
    t: Tournament | None = None
    plan: Plan | None = None
    # Discussions of other settings than these are stale: the YAML's, else the last run's.
    state = read_state(directory)
    context = None if state is None else state.context
    try:
        if config_file is None and (
            (recorded := recorded_config(directory)) is None or not recorded.is_file()
        ):
            frame = read_plan(directory)
            if frame is None:
                fail(
                    f"{directory}: no tournament YAML recorded or found and no plan.parquet; "
                    "pass --config FILE"
                )
            source = "plan.parquet"
        else:
            t = load_for_directory(directory, config_file)
            plan = build_plan(t)
            frame = plan_frame(t, plan)
            if t.config.batcheval is not None:
                answers = [(a.id, a.question, a.model) for a in plan.answers]
                batcheval = batcheval_states(t, answers, RunLog(directory))
            if t.config.discussion is not None:
                templates = load_templates(t.config.discussion, t.path)
                context = discussion_context(t, t.config.discussion, templates)
    except ConfigError as exc:
        fail(str(exc))
    report = status_report(
        frame, RunLog(directory), batcheval=batcheval, discussion_context=context
    )
    data: dict[str, Any] = {"directory": str(directory), "plan_source": source, **report.to_json()}
    log = RunLog(directory)
    data["errors"] = logged_failures(log)
    # Damaged parts moved aside, and parts deleted since they were written.
    quarantine = directory / "log" / "quarantine"
    data["quarantined"] = sorted(
        str(p.relative_to(directory)) for p in quarantine.glob("*/*") if p.is_file()
    )
    data["missing_parts"] = log.missing_parts()
    data["last_run"] = _last_run(directory)
    sampled = None if plan is None or t is None else design_status(t, plan, RunLog(directory))
    data["sampling"] = sampled
    data["tokens"] = token_totals(log)
    data["freshness"] = _freshness(directory, limit)
    if as_json:
        click.echo(json.dumps(data))
        _exit_if_stale(data["freshness"])
        return
    table = Table(title=f"Status of {directory} (plan from {source})")
    for col in _COLUMNS:
        table.add_column(col, justify="left" if col in ("stage", "provider") else "right")
    for row in report.rows:
        table.add_row(*_cells(row))
    table.add_row(*_cells({"stage": "total", "provider": "", **report.total}), style="bold")
    # Piped or logged output has no width: do not squeeze the columns into 80.
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    click.echo(describe_tokens(data["tokens"]))
    for stage, rows in report.outside_plan.items():
        if rows["stale"] or rows["unused"]:
            click.echo(
                f"{stage}: {rows['stale']} logged calls are stale (superseded by the "
                f"current plan), {rows['unused']} belong to models or questions no "
                "longer in it; neither is used."
            )
    if sampled is not None:
        click.echo(
            f"sampling: {sampled['strategy']}, {sampled['judged_review_calls']} of a budget of "
            f"{sampled['budget_review_calls']} review calls judged ({sampled['rounds']} rounds), "
            f"at most {sampled['remaining_review_calls']} more; the table counts the full "
            f"plan's {sampled['full_review_calls']} reviews, most of which a sampled run "
            "never makes."
        )
    d = report.discussions
    if any(d.values()):
        click.echo(
            f"discussions: {d['logged']} logged ({d['agreed']} agreed, {d['unresolved']} "
            f"unresolved, {d['in_progress']} in progress), {d['calls']} calls "
            f"({d['failed_calls']} failed)"
            + (f"; {d['stale']} more under older settings, not used" if d["stale"] else "")
        )
    for path in data["quarantined"]:
        click.echo(f"quarantined (unreadable, its calls run again): {path}")
    for table, names in data["missing_parts"].items():
        for name in names:
            click.echo(f"deleted: log/{table}/{name} (its calls run again)")
    last = data["last_run"]
    if last is not None and last.get("run_id"):
        click.echo(
            f"last {last.get('command', 'run')} {last['run_id']}: "
            + (
                "running (no exit yet)"
                if last.get("exit_code") is None
                else f"exit {last['exit_code']} ({last.get('exit_meaning')})"
            )
            + f", started {last.get('started_at')}"
        )
    if last is not None and (last.get("budget_stopped") or last.get("interrupted")):
        why = "stopped by the budget" if last.get("budget_stopped") else "interrupted"
        pending = last.get("pending", (last.get("calls") or {}).get("pending"))
        click.echo(f"last {last.get('command', 'run')}: {why}, {pending} pending")
    for entry in last.get("errors", []) if last is not None else []:
        if entry.get("reason") in ("budget reached", "deferred"):
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


def _exit_if_stale(fresh: dict[str, Any]) -> None:
    if not fresh["fresh"]:
        sys.exit(int(Exit.PARTIAL))


def _last_run(directory: Path) -> dict[str, Any] | None:
    """DIR/last_run.json (how the last run ended, its error reasons), or None."""
    try:
        record = json.loads((directory / LAST_RUN).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _cells(row: dict[str, Any]) -> list[str]:
    """A status row as table cells."""
    return [f"{row[c]:.4f}" if c == "spent_usd" else str(row[c]) for c in _COLUMNS]
