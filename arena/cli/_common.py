"""Shared pieces of the CLI: exit codes and error reporting."""

from __future__ import annotations

import json
import math
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from arena.cli._exit import Exit as Exit  # re-exported for the commands
from arena.cli._exit import exit_for
from arena.cli._record import complete, note_failure
from arena.errors import ArenaError

if TYPE_CHECKING:
    import asyncio

    from arena.config import Tournament
    from arena.scheduler import Scheduler

# Every command runs through `exit_on_fault`: the config, the runner and the
# store load when a command needs them, not here (`arena leaderboard` needs no
# runner, `arena plan` no store).


class Command(click.Command):
    """An arena command: an `ArenaError` it does not handle ends it with its kind's exit
    code and message (`ArenaError.exit_code`), also when it is invoked on its own (tests,
    scripts) rather than through `arena`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ArenaError as exc:
            error_exit(exc, bool(ctx.params.get("as_json")))


def fail(message: str, code: Exit = Exit.BAD_INPUT) -> NoReturn:
    """Print an error on stderr and exit with the code."""
    note_failure(message)  # the run record of `arena run` / `retry-failed` (_record.py)
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(int(code))


def storage_exit(
    exc: BaseException, as_json: bool, report: Mapping[str, Any] | None = None
) -> NoReturn:
    """End a command whose log could not be written: the path and why, exit 74."""
    from arena.store import storage_error

    storage = storage_error(exc, "the output directory")
    message = str(storage) if storage is not None else str(exc)
    message += "; every row logged before is kept: free space or fix permissions, then run again"
    if as_json:
        click.echo(json.dumps({**(report or {}), "exit_code": int(Exit.STORAGE), "error": message}))
    fail(message, Exit.STORAGE)


def error_exit(exc: ArenaError, as_json: bool) -> NoReturn:
    """End a command with an error it did not handle: its message, its kind's exit code."""
    code = exit_for(exc)
    assert code is not None  # every ArenaError has one
    if code is Exit.STORAGE:
        storage_exit(exc, as_json)
    fail(str(exc), code)


@contextmanager
def exit_on_fault(as_json: bool) -> Iterator[None]:
    """Ctrl-C before a command handles signals exits 130; an `ArenaError` a command did
    not handle exits with its kind's code (`ArenaError.exit_code`: 2 bad config or
    input, 75 locked, ...), its message on stderr; an unwritable log exits 74."""
    try:
        yield
    except KeyboardInterrupt:  # SIGINT, or a signal the program noted (arena.runtime)
        from arena.runtime import signal_exit_code

        click.echo("arena: interrupted", err=True)
        sys.exit(signal_exit_code() or int(Exit.SIGINT))
    except ArenaError as exc:
        error_exit(exc, as_json)
    except Exception as exc:
        from arena.store import storage_error

        if storage_error(exc, "the output directory") is None:
            raise
        storage_exit(exc, as_json)


def load_or_exit(file: Path, out: Path | None = None) -> Tournament:
    """Load a tournament YAML or exit 2 naming the file, key and problem."""
    from arena.config import ConfigError, load_tournament

    try:
        return load_tournament(file, out)
    except ConfigError as exc:
        fail(str(exc))


DEFAULT_GRACE_SECONDS = 10.0


class Interrupts:
    """SIGINT / SIGTERM during a run: stop starting calls, then cancel what is left.

    The first signal stops new attempts: the calls in flight are awaited (and
    logged) for up to `grace` seconds, then cancelled; a second signal
    cancels them at once. `install` inside the running loop; pass `attach`
    as the run's `on_scheduler`. The signals land in the caller's list, whose
    first entry decides the exit code (130 / 143).
    """

    def __init__(self, signals: list[int], grace: float = DEFAULT_GRACE_SECONDS) -> None:
        self.signals = signals
        self.grace = grace
        self.scheduler: Scheduler | None = None
        self._timer: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Handle SIGINT and SIGTERM on the running event loop: handed over by the
        program's own handler (arena.runtime), else the loop's handlers."""
        import asyncio  # here: the commands that never run the engine skip asyncio

        from arena.runtime import set_signal_listener, signals_deferred

        loop = asyncio.get_running_loop()
        if signals_deferred():

            def listener(signum: int) -> bool:
                try:
                    loop.call_soon_threadsafe(self._on_signal, signum, False)
                except RuntimeError:  # the loop has closed: the end of the run
                    return False
                return True

            set_signal_listener(listener)
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._on_signal, sig)

    def attach(self, scheduler: Scheduler) -> None:
        """The run's scheduler, to stop on a signal."""
        self.scheduler = scheduler
        if self.signals:
            self._stop(len(self.signals))

    def _on_signal(self, signum: int, note: bool = True) -> None:
        from arena.runtime import received_signals

        if note or self.signals is not received_signals():  # the program noted it there
            self.signals.append(signum)
        if len(self.signals) == 1:
            click.echo(
                f"arena: {signal.Signals(signum).name}: starting no new calls; waiting up to "
                f"{self.grace:g}s for the calls in flight (again to cancel them now)",
                err=True,
            )
        if self.scheduler is not None:
            self._stop(len(self.signals))

    def _stop(self, count: int) -> None:
        scheduler = self.scheduler
        assert scheduler is not None
        if count >= 2:
            self._abort()
            return
        scheduler.stop()
        if self._timer is None:
            import asyncio

            self._timer = asyncio.get_running_loop().call_later(self.grace, self._abort)

    def _abort(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.scheduler is not None:
            self.scheduler.abort()


def run_signals() -> list[int]:
    """The list a run's signals land in: the program's own (arena.runtime: also those
    noted while it loaded), else a new one (a run called from Python)."""
    from arena.runtime import received_signals, signals_deferred

    return received_signals() if signals_deferred() else []


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


def _check_budget(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A budget is a finite amount >= 0 USD; anything else is refused at parsing (exit 2)."""
    if value is not None and (not math.isfinite(value) or value < 0):
        raise click.BadParameter(f"{value} is not a budget: give a finite amount >= 0 USD")
    return value


budget_option = click.option(
    "--budget",
    type=float,
    callback=_check_budget,
    default=None,
    metavar="USD",
    help=(
        "This run's limit: stop starting calls before its spend plus reservations "
        "would exceed USD (exit 4). The YAML's budget_usd limits all runs together."
    ),
)


def _check_grace(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A grace period is a finite number of seconds >= 0."""
    if not math.isfinite(value) or value < 0:
        raise click.BadParameter(f"{value} is not a number of seconds >= 0")
    return value


grace_option = click.option(
    "--grace",
    type=float,
    callback=_check_grace,
    default=DEFAULT_GRACE_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help=(
        "After SIGINT/SIGTERM, how long the calls in flight may finish (and be logged) "
        "before they are cancelled; a second signal cancels them at once."
    ),
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
    errors: Sequence[dict[str, Any]],
    code: Exit,
    notes: Sequence[str] = (),
) -> NoReturn:
    """End a command that ran calls: the JSON report or a summary line, errors, exit code.

    `errors` are `RunSummary.errors` (per provider, model and reason); a storage
    error in the report (`error`) is printed too.
    """
    from arena.runner import error_lines

    report = complete(report, int(code))  # run id, times, pid, report files (_record.py)
    if as_json:
        click.echo(json.dumps(report))
    else:
        click.echo(line, err=True)
        for err in error_lines(errors):
            click.echo(f"arena: {err}", err=True)
    if report.get("error"):
        click.echo(f"arena: error: {report['error']}", err=True)
    for note in notes:
        click.echo(f"arena: {note}", err=True)
    sys.exit(int(code))
