"""`arena retry-failed`: run again only the calls of a run directory that failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arena.cli._common import (
    Command,
    budget_option,
    fail,
    grace_option,
    json_summary_option,
    recorded_config_option,
    report_and_exit,
)
from arena.cli._record import output_of_dir, recorded
from arena.cli._run import run_in_directory, storage_report, tokens_text
from arena.engine import preflight
from arena.rundir import load_for_directory


@click.command("retry-failed", cls=Command)
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@recorded_config_option
@json_summary_option
@budget_option
@grace_option
@recorded("retry-failed", output_of_dir)
def retry_failed_cmd(
    directory: Path, config_file: Path | None, as_json: bool, budget: float | None, grace: float
) -> None:
    """Run again only the answers and reviews of DIR logged as failed.

    Also runs the reviews a failed answer kept from running; nothing new or
    stale is started (that is `arena run`), and extra stages (discussion,
    BatchEval) do not run. The config is the tournament YAML that DIR's last
    run recorded, or --config; it may change retry settings and limits but
    not the plan (a changed plan exits 2). Exit codes as `arena run`: 0 every
    retried call done, 1 internal error, 2 bad input, 3 some still failed, 4
    budget reached, 74 log not writable, 75 locked, 130/143 interrupted.
    """
    t = load_for_directory(directory, config_file)
    problems = preflight(t, budget_usd=budget)
    if problems:
        fail("\n  ".join([f"{t.path}: cannot start:"] + problems))
    done, code = run_in_directory(t, budget, as_json, retry_failed=True, grace=grace)
    summary, blocked = done.summary, done.blocked
    report: dict[str, Any] = summary.to_json()
    report.update(
        retried=done.start.count("failed"),
        unblocked=blocked,
        exit_code=int(code),
        output=str(t.output_dir),
        **storage_report(summary),
        history_note=done.history,
    )
    line = (
        f"{t.name}: retried {report['retried']} failed calls and {blocked} reviews they "
        f"blocked: completed {summary.completed}, invalid {summary.invalid}, failed "
        f"{summary.failed}, pending {summary.pending}; {tokens_text(summary.tokens)} "
        f"({summary.wall_seconds:.1f}s) "
        f"-> {t.output_dir}"
    )
    notes = [done.history] if done.history is not None else []
    report_and_exit(report, as_json, line, summary.errors, code, notes)
