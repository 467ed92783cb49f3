"""`arena run`: run (or resume) a tournament."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from arena.cli._common import (
    DEFAULT_GRACE_SECONDS,
    Command,
    Exit,
    Interrupts,
    budget_option,
    fail,
    grace_option,
    json_summary_option,
    report_and_exit,
    run_signals,
    signal_exit,
)
from arena.cli._record import (
    current_run_id,
    output_of_yaml,
    recorded,
    running,
    stop_if_signalled,
    tag_option,
)
from arena.config import ConfigError, Tournament
from arena.engine import DirectoryRun, RunOptions, prepare_run, run_directory
from arena.errors import PreflightError
from arena.progress import BarsView, LineView, RunProgress
from arena.runner import RunSummary
from arena.scheduler import Scheduler
from arena.shard import parse_shard

# Seconds between progress lines when stderr is not a terminal (cron, logs), and
# between redraws of the bars on a terminal.
LINE_INTERVAL = 10.0
BARS_INTERVAL = 0.25


def _PlainProgress() -> RunProgress:  # noqa: N802 - used as a class by `arena discuss`
    """One timestamped line per interval on stderr, with every figure (for cron and logs)."""
    return RunProgress(LineView(sys.stderr), interval=LINE_INTERVAL)


def _run(
    t: Tournament,
    budget: float | None,
    progress: RunProgress,
    signals: list[int],
    retry_failed: bool = False,
    grace: float = DEFAULT_GRACE_SECONDS,
    tag: str | None = None,
    history: bool = True,
) -> DirectoryRun:
    interrupts = Interrupts(signals, grace)

    def done() -> int:  # calls finished so far: the heartbeat's progress
        return sum(d for d, _ in progress.counts.values())

    def attach(scheduler: Scheduler) -> None:
        # the run record says "running" (a killed run leaves it); the heartbeat starts
        running(t.output_dir, done)
        interrupts.attach(scheduler)
        progress.bind_scheduler(scheduler)  # the spend so far

    try:
        return run_directory(
            t,
            retry_failed=retry_failed,
            run_id=current_run_id(),  # the run record's id, also in the history snapshot
            tag=tag,
            budget_usd=budget,
            progress=progress,
            on_loop=interrupts.install,
            on_scheduler=attach,
            # stopped by SIGINT / SIGTERM (exit 130 / 143)
            interrupted=lambda: bool(signals),
            history=history,
        )
    finally:
        progress.close()


def run_in_directory(
    t: Tournament,
    budget: float | None,
    as_json: bool,
    retry_failed: bool = False,
    grace: float = DEFAULT_GRACE_SECONDS,
    tag: str | None = None,
    history: bool = True,
) -> tuple[DirectoryRun, Exit]:
    """Run with progress bars on a terminal, else timestamped lines.

    A held lock (`LockHeld`, exit 75), a changed plan (`PlanChanged`) or a directory
    of another shard (`ConfigError`, exit 2) propagate: the CLI maps them (_exit.py).
    """
    signals = run_signals()  # with those noted while the program loaded
    if sys.stderr.isatty() and not as_json:
        bars = RunProgress(BarsView(Console(stderr=True)), interval=BARS_INTERVAL)
        done = _run(t, budget, bars, signals, retry_failed, grace, tag, history)
    else:
        done = _run(t, budget, _PlainProgress(), signals, retry_failed, grace, tag, history)
    return done, exit_code(done.summary, signals)


def exit_code(summary: RunSummary, signals: list[int]) -> Exit:
    """The documented exit code for a finished run."""
    if summary.storage_error is not None:
        return Exit.STORAGE
    if summary.stopped_by_errors is not None:  # a bug: unexpected exceptions
        return Exit.ERROR
    interrupted = signal_exit(signals)
    if interrupted is not None:
        return interrupted
    if summary.budget_stopped:
        return Exit.BUDGET
    if summary.failed or summary.pending:
        return Exit.PARTIAL
    return Exit.OK


@click.command("run", cls=Command)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory (default: the YAML's `output`, else runs/<name>).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="A smoke run: only the first N questions (same log: a later full run reuses them; "
    "not recorded in the history).",
)
@click.option(
    "--shard",
    "shard_text",
    metavar="K/N",
    default=None,
    help="Run only shard K of N: the calls of the questions whose id hashes to K "
    "(each shard in its own --out directory; rank them together with "
    "`arena leaderboard DIR1 DIR2 ...`).",
)
@click.option(
    "--batch",
    is_flag=True,
    help="Send the calls of every openai, anthropic and gemini provider as batch jobs "
    "(batch prices, results within hours; resumable: docs/cost.md).",
)
@json_summary_option
@budget_option
@grace_option
@tag_option
@recorded("run", output_of_yaml)
def run_cmd(
    file: Path,
    out: Path | None,
    limit: int | None,
    shard_text: str | None,
    batch: bool,
    as_json: bool,
    budget: float | None,
    grace: float,
    tag: str | None,
) -> None:
    """Run or resume the tournament in FILE.

    Every contestant answers every question; every ordered pair is judged by
    every reviewer. Results are appended to the crash-safe log in the output
    directory; calls already logged are never made again. With --shard K/N
    only the calls of the questions that hash to shard K run
    (docs/scale.md). Exit codes: 0 complete, 1 internal error (a crash, or
    stopped after 3 unexpected errors: a bug), 2 bad input, 3 partial (failed
    or pending calls remain), 4 budget reached, 74 the log cannot be written,
    75 another run holds the lock, 130/143 interrupted.
    """
    shard = None
    if shard_text is not None:
        try:
            shard = parse_shard(shard_text)
        except ValueError as exc:
            fail(f"--shard: {exc}")
    options = RunOptions(
        out=out, limit=limit, shard=shard, batch=batch, budget=budget, grace=grace, tag=tag
    )
    try:
        t = prepare_run(
            file,
            options,
            warn=lambda line: click.echo(f"arena: warning: {line}", err=True),
            note=lambda line: click.echo(f"arena: {line}", err=True),
        )
    except PreflightError as exc:
        fail("\n  ".join([f"{file}: cannot start:", *exc.problems]))
    except ConfigError as exc:
        fail(config_message(file, exc))
    stop_if_signalled()  # a signal while the tournament loaded: ends here, recorded
    done, code = run_in_directory(t, budget, as_json, grace=grace, tag=tag, history=options.history)
    summary = done.summary
    report: dict[str, Any] = summary.to_json()
    report.update(done.start.to_json())  # new / stale / retried calls at the start
    report["exit_code"] = int(code)
    report["output"] = str(t.output_dir)
    report.update(storage_report(summary))
    report["history_note"] = done.history  # why no history snapshot was taken (the record)
    line = (
        f"{t.name}: planned {summary.planned}, skipped {summary.skipped}, "
        f"completed {summary.completed}, invalid {summary.invalid}, "
        f"failed {summary.failed}, pending {summary.pending}; {tokens_text(summary.tokens)} "
        f"({summary.wall_seconds:.1f}s) -> {t.output_dir}"
    )
    notes = [done.history] if done.history is not None else []
    report_and_exit(report, as_json, line, summary.errors, code, notes)


def config_message(file: Path, exc: ConfigError) -> str:
    """A config error as `arena check` words it: every unknown key first, with its
    "did you mean" (a misspelt key is the usual cause of a missing one), then the error."""
    from arena.cli._check import unknown_keys
    from arena.config import TournamentConfig, read_yaml

    try:
        hints = [f"{file}: {p}" for p in unknown_keys(read_yaml(file), TournamentConfig)]
    except ConfigError:
        hints = []
    return "\n".join([*hints, str(exc)]) if str(exc) not in hints else str(exc)


def tokens_text(tokens: dict[str, int]) -> str:
    """A run's billed tokens for its summary line: in (cache read, write), out (reasoning)."""
    return (
        f"tokens in {tokens.get('in', 0)} (cache read {tokens.get('cache_read', 0)}, "
        f"write {tokens.get('cache_write', 0)}), out {tokens.get('out', 0)} "
        f"(reasoning {tokens.get('reasoning', 0)})"
    )


def storage_report(summary: RunSummary) -> dict[str, Any]:
    """The `error` of a run whose log could not be written (nothing when it could)."""
    if summary.storage_error is None:
        return {}
    return {
        "error": f"{summary.storage_error}; every row logged before is kept: free space "
        "or fix permissions, then run again"
    }
