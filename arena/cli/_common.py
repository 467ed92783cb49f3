"""Shared pieces of the CLI: exit codes and error reporting."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Mapping, Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any, NoReturn

import click

from arena.cli._record import complete, note_failure
from arena.config import ConfigError, Tournament, load_tournament
from arena.scheduler import Scheduler


class Exit(IntEnum):
    """Process exit codes, the same for every command (see README)."""

    OK = 0
    ERROR = 1
    BAD_INPUT = 2
    PARTIAL = 3
    BUDGET = 4
    LOCKED = 75
    SIGINT = 130
    SIGTERM = 143


def fail(message: str, code: Exit = Exit.BAD_INPUT) -> NoReturn:
    """Print an error on stderr and exit with the code."""
    note_failure(message)  # the run record of `arena run` / `retry-failed` (_record.py)
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(int(code))


def load_or_exit(file: Path, out: Path | None = None) -> Tournament:
    """Load a tournament YAML or exit 2 naming the file, key and problem."""
    try:
        return load_tournament(file, out)
    except ConfigError as exc:
        fail(str(exc))


class Interrupts:
    """SIGINT / SIGTERM during a run: stop starting calls and remember the signal.

    `install` inside the running loop; pass `attach` as the run's
    `on_scheduler`. The signals land in the caller's list, whose first entry
    decides the exit code (130 / 143).
    """

    def __init__(self, signals: list[int]) -> None:
        self.signals = signals
        self.scheduler: Scheduler | None = None

    def install(self) -> None:
        """Handle SIGINT and SIGTERM on the running event loop."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._on_signal, sig)

    def attach(self, scheduler: Scheduler) -> None:
        """The run's scheduler, to stop on a signal."""
        self.scheduler = scheduler
        if self.signals:
            scheduler.stop()

    def _on_signal(self, signum: int) -> None:
        self.signals.append(signum)
        if self.scheduler is not None:
            self.scheduler.stop()


def signal_exit(signals: list[int]) -> Exit | None:
    """The exit code of an interrupted run (None when no signal came)."""
    if not signals:
        return None
    return Exit.SIGTERM if signals[0] == signal.SIGTERM else Exit.SIGINT


# Options shared by the commands that run calls.
json_summary_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a final JSON summary on stdout (for scripts and monitoring).",
)
budget_option = click.option(
    "--budget",
    type=float,
    default=None,
    metavar="USD",
    help="Stop starting calls before spend plus reservations exceed USD (exit 4).",
)
recorded_config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Tournament YAML (default: the one DIR's last run recorded in tournament.json).",
)


def report_and_exit(
    report: Mapping[str, Any],
    as_json: bool,
    line: str,
    errors: Sequence[str],
    code: Exit,
    notes: Sequence[str] = (),
) -> NoReturn:
    """End a command that ran calls: the JSON report or a summary line, errors, exit code."""
    report = complete(report, int(code))  # run id, times, pid, report files (_record.py)
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(line, err=True)
        for err in errors:
            click.echo(f"arena: {err}", err=True)
    for note in notes:
        click.echo(f"arena: {note}", err=True)
    sys.exit(int(code))
