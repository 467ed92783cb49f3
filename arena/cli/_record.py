"""A record of every `arena run` / `arena retry-failed`, whatever its exit code.

`recorded(...)` wraps a command with an `arena.ops.RunRecord` (its run id,
its status record, report files, alerts and metrics: see there), ended for
every exit code. With
`--json` the summary line (with the record under `record`) is printed even
when the command failed before running (bad input, exit 2; held lock, exit
75; a crash, exit 1). The report and last_run.json are written at the start
as well, so a run killed outright leaves a record with no exit code, which
the next run marks as killed.

Reports, alerts and metrics are by-products: any exception in them is logged
with its traceback to DIR/reports/problems.log and never changes the exit
code; a minimal report is written when the full one cannot be.

`fail` and `report_and_exit` (arena/cli/_common.py) call `note_failure` and
`complete`; outside a recorded command those do nothing.
"""

from __future__ import annotations

import functools
import json
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from arena.errors import ArenaError, ArenaStorageError
from arena.ops import (
    RUN_ID_ENV,
    RunRecord,
    count_snapshots,
    is_dir,
    new_run_id,
    warn_problem,
    whole_run,
)

__all__ = [
    "RUN_ID_ENV",
    "complete",
    "current_run_id",
    "note_failure",
    "recorded",
    "running",
    "stop_if_signalled",
    "tag_option",
]

F = TypeVar("F", bound=Callable[..., Any])

_active: RunRecord | None = None


def running(directory: Path, done: Callable[[], int] | None = None) -> None:
    """The run's calls start in `directory` (inside the run's event loop, the lock held):
    write its "running" record now unless it is already there (a first night's
    directory did not exist when the command started), and start its heartbeat
    (`done()` counts the calls finished so far: arena.ops.Heartbeat)."""
    rec = _active
    if rec is None:
        return
    if not rec.started_written:
        rec.output = Path(directory)
        rec.finish({**rec.fields(None), "output": str(directory)}, None)
        rec.started_written = True
    if done is not None:
        from arena.ops import Heartbeat  # here: the everyday commands never load asyncio

        try:
            Heartbeat(rec, done).start()
        except Exception as exc:  # noqa: BLE001 - a by-product never stops the run
            warn_problem(rec.output, f"no heartbeat for run {rec.run_id}: {exc}")


def current_run_id() -> str | None:
    """The id of the recorded command running now (None outside one)."""
    return None if _active is None else _active.run_id


def note_failure(message: str) -> None:
    """Remember why a recorded command is about to exit early (called by `fail`)."""
    if _active is not None and _active.error is None:
        _active.error = message


def stop_if_signalled() -> None:
    """End the command as interrupted (KeyboardInterrupt: its record says 130 / 143) when
    the program was sent a signal that nothing acted on yet (arena.runtime)."""
    from arena.runtime import received_signals

    if received_signals():
        raise KeyboardInterrupt


def complete(report: Mapping[str, Any], code: int) -> dict[str, Any]:
    """The summary of a recorded command that ran: with the run's record and its report path.

    Writes the report files, last_run.json, alerts and metrics. Outside a
    recorded command, the summary as given.
    """
    from arena.runtime import signals_end

    signals_end()  # the exit code is decided: a signal now leaves it (and the record) as is
    out = dict(report)
    rec = _active
    if rec is None:
        return out
    rec.done = True
    if out.get("output"):
        rec.output = Path(str(out["output"]))
    ended = time.time()
    out.update(rec.fields(ended))
    out["exit_code"] = int(code)
    whole_run(out, rec, ended)
    record = rec.finish(out, int(code))
    out["report"] = record["report"]
    out["record"] = record
    return out


def _fallback(rec: RunRecord, code: int) -> None:
    """Summary and report of a recorded command that ended without running (or crashed)."""
    from arena.runtime import signals_end

    signals_end()
    ended = time.time()
    summary: dict[str, Any] = {
        "exit_code": code,
        "error": rec.error,
        "output": None if rec.output is None else str(rec.output),
        **rec.fields(ended),
        "wall_seconds": max(0.0, ended - rec.started),
        "call_loop_seconds": None,
    }
    record = rec.finish(summary, code)
    summary["report"] = record["report"]
    summary["record"] = record
    if rec.as_json:
        click.echo(json.dumps(summary))


def storage_message(exc: BaseException, output: Path | None) -> str | None:
    """What to say about a log or state file that cannot be written (disk full,
    read-only, no permission): the path and why, and that nothing logged is lost;
    None when `exc` is no such error."""
    from arena.store import storage_error

    storage = storage_error(exc, output if output is not None else "the output directory")
    if storage is None:
        return None
    return (
        f"{storage}; every row logged before is kept: free space or fix permissions, then run again"
    )


def _end(message: str, code: int) -> NoReturn:
    """End a recorded command whose record is printed: its error on stderr, its code."""
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(code)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def _config_of(kwargs: Mapping[str, Any]) -> Path | None:
    """The tournament YAML of the command: FILE, --config, else the one DIR recorded."""
    for key in ("file", "config_file"):
        if kwargs.get(key) is not None:
            return Path(kwargs[key])
    if kwargs.get("directory") is not None:
        from arena.rundir import recorded_config

        return recorded_config(kwargs["directory"])
    return None


def recorded(
    command: str, output_of: Callable[[Mapping[str, Any]], Path | None]
) -> Callable[[F], F]:
    """Record every end of a click command callback (see the module).

    `output_of` gives the run directory from the command's parameters, as
    well as it can before anything is loaded (None when unknown).
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> Any:
            global _active
            try:
                output = output_of(kwargs)
            except Exception:  # a guess at the directory must never stop the command
                output = None
            try:
                config = _config_of(kwargs)
            except Exception:  # noqa: BLE001
                config = None
            rec = RunRecord(
                command=command,
                run_id=new_run_id(),
                started=time.time(),
                as_json=bool(kwargs.get("as_json")),
                output=output,
                config=config,
                snapshots_at_start=count_snapshots(output),
            )
            _active = rec
            try:
                rec.start()  # "running" until it ends
                stop_if_signalled()  # a signal while the program loaded: ends here, recorded
                return func(**kwargs)
            except SystemExit as exc:
                if not rec.done:
                    _fallback(rec, _exit_code(exc))
                raise
            except KeyboardInterrupt:  # SIGINT, or a signal the program noted (SIGTERM too)
                if not rec.done:
                    from arena.runtime import received_signals, signal_exit_code

                    seen = received_signals()
                    name = signal.Signals(seen[0]).name if seen else "SIGINT"
                    rec.error = rec.error or f"interrupted ({name})"
                    _fallback(rec, signal_exit_code() or 130)
                raise
            except (click.exceptions.Exit, click.Abort):
                raise
            except ArenaError as exc:  # the CLI exits with its kind's code (_exit.py)
                if rec.done:
                    raise
                storage = exc.exit_code == ArenaStorageError.exit_code
                message = (storage_message(exc, rec.output) if storage else None) or str(exc)
                rec.error = rec.error or message
                _fallback(rec, exc.exit_code)
                _end(message, exc.exit_code)
            except Exception as exc:
                if rec.done:
                    raise
                full = storage_message(exc, rec.output)
                if full is not None:  # a full disk before the run began: exit 74
                    rec.error = rec.error or full
                    _fallback(rec, ArenaStorageError.exit_code)
                    _end(full, ArenaStorageError.exit_code)
                rec.error = rec.error or f"{type(exc).__name__}: {exc}"
                warn_problem(
                    rec.output if rec.output is not None and is_dir(rec.output) else None,
                    f"run {rec.run_id} crashed: {rec.error}",
                )
                _fallback(rec, 1)
                raise
            finally:
                _active = None

        return wrapper  # type: ignore[return-value]

    return decorate


def output_of_yaml(kwargs: Mapping[str, Any]) -> Path | None:
    """The output directory of `arena run FILE [--out DIR]`, read loosely from the YAML
    (`output`, else runs/<name>), so that a config error still has a run directory."""
    if kwargs.get("out") is not None:
        return Path(kwargs["out"])
    from arena.config import ConfigError, read_yaml  # bounded: no alias bomb, no deep nesting

    try:
        data = read_yaml(Path(kwargs["file"]))
    except ConfigError:
        return None
    if not isinstance(data, dict):
        return None
    output, name = data.get("output"), data.get("name")
    if isinstance(output, str) and output:
        return Path(output)
    if isinstance(name, str) and name:
        return Path("runs") / name
    return None


def output_of_dir(kwargs: Mapping[str, Any]) -> Path | None:
    """The run directory of `arena retry-failed DIR`."""
    return Path(kwargs["directory"])


def _check_tag(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if not text or ".." in text or text.lstrip("-").isdigit() or len(text) > 64:
        raise click.BadParameter(
            "a tag is a short name, not a number, without '..' (it names the snapshot "
            "for `arena leaderboard --diff A..B`)"
        )
    return text


tag_option = click.option(
    "--tag",
    default=None,
    metavar="NAME",
    callback=_check_tag,
    help="Name this run's history snapshot (for `arena leaderboard --diff NAME..`); a tagged "
    "run adds a snapshot even when nothing changed.",
)
