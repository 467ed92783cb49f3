"""`arena discuss`: run PeerDiscussion on an existing tournament (see docs/discussion.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from arena.cli._common import (
    Command,
    Interrupts,
    budget_option,
    fail,
    grace_option,
    json_summary_option,
    recorded_config_option,
    report_and_exit,
)
from arena.cli._run import _PlainProgress, exit_code, storage_report
from arena.config import Tournament
from arena.discuss import TABLE as DISCUSSIONS
from arena.discuss import (
    TRIGGERS,
    accuracy_line,
    bias_line,
    discuss_existing,
    discussion_accuracy,
    discussion_stats,
    read_state,
    with_discussion,
)
from arena.engine import preflight
from arena.report import LeaderboardInputError, load_reviews_file
from arena.rundir import load_for_directory
from arena.runner import RunSummary
from arena.store import RunLock, RunLog


async def _run(t: Tournament, budget: float | None, signals: list[int], grace: float) -> RunSummary:
    interrupts = Interrupts(signals, grace)
    interrupts.install()
    return await discuss_existing(
        t, budget_usd=budget, progress=_PlainProgress(), on_scheduler=interrupts.attach
    )


@click.command("discuss", cls=Command)
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--trigger",
    "triggers",
    multiple=True,
    type=click.Choice(TRIGGERS),
    help="Which battles to discuss (repeatable); default: the YAML's "
    "discussion.trigger, else tie and inconsistent.",
)
@click.option(
    "--human",
    "human_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Human preference labels of the battles (a judgments file, as for "
    "`arena leaderboard --human`): report the discussions' accuracy against them, "
    "before and after discussion, with 95% bootstrap intervals.",
)
@recorded_config_option
@json_summary_option
@budget_option
@grace_option
def discuss_cmd(
    directory: Path,
    triggers: tuple[str, ...],
    human_file: Path | None,
    config_file: Path | None,
    as_json: bool,
    budget: float | None,
    grace: float,
) -> None:
    """Discuss the disputed battles of the tournament in DIR, from its logged reviews.

    Two reviewers discuss each selected battle to a shared verdict (the
    tournament's `discussion:` section, or its defaults). Only answers and
    reviews already logged are used. Turns are appended to the `discussions`
    table of DIR's log; a rerun resumes. `arena leaderboard DIR` then shows the
    rankings with and without the discussion outcomes. Exit codes: 0 complete,
    2 bad input, 3 partial, 4 budget reached, 75 locked, 130/143 interrupted.
    """
    t = with_discussion(load_for_directory(directory, config_file), triggers)
    human = None
    if human_file is not None:
        try:
            human = load_reviews_file(human_file, duplicates="all")
        except LeaderboardInputError as exc:
            fail(str(exc))
    problems = preflight(t, budget_usd=budget)
    if problems:
        fail("\n  ".join([f"{t.path}: cannot start:"] + problems))
    signals: list[int] = []
    with RunLock(t.output_dir):
        summary = asyncio.run(_run(t, budget, signals, grace))
    code = exit_code(summary, signals)
    state = read_state(t.output_dir)
    table = RunLog(t.output_dir).read(DISCUSSIONS)
    stats = discussion_stats(table, state.context if state else None)
    calls = summary.by_stage.get("discussions", {})
    report: dict[str, Any] = {
        "output": str(t.output_dir),
        "exit_code": int(code),
        "calls": calls,
        "pending": summary.pending,
        "wall_seconds": summary.wall_seconds,
        "errors": summary.errors,
        **stats.to_json(),
        **storage_report(summary),
    }
    lines = [bias_line(stats.biases)]
    if human is not None:
        accuracy = discussion_accuracy(
            table, human, context=state.context if state else None, seed=t.config.seed
        )
        report["human_accuracy"] = accuracy
        lines.append(accuracy_line(accuracy))
    line = (
        f"{t.name}: discussions {stats.discussions} (agreed {stats.agreed}, unresolved "
        f"{stats.unresolved}, in progress {stats.in_progress}); calls "
        + ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
        + f" ({summary.wall_seconds:.1f}s) -> {t.output_dir}"
        + "".join(f"\n{extra}" for extra in lines if extra)
    )
    report_and_exit(report, as_json, line, summary.errors, code)
