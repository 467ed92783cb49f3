"""A record of every `arena run` / `arena retry-failed`, whatever its exit code.

`recorded(...)` wraps a command: it gives the run an id (`ARENA_RUN_ID` from
the wrapper script, else a new one), and at the end, for every exit code,
adds `run_id`, `command`, `started_at`, `ended_at` and `pid` to the JSON
summary, prints a summary with `--json` even when the command failed before
running (bad input, exit 2; held lock, exit 75; a crash, exit 1), and writes
the per-night report files into the run directory (`arena.nightly`
`write_report`). The report is written at the start as well, so a run killed
outright leaves one saying it never ended.

`fail` and `report_and_exit` (arena/cli/_common.py) call `note_failure` and
`complete`; outside a recorded command those do nothing.
"""

from __future__ import annotations

import functools
import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["RUN_ID_ENV", "complete", "current_run_id", "note_failure", "recorded", "tag_option"]

RUN_ID_ENV = "ARENA_RUN_ID"

F = TypeVar("F", bound=Callable[..., Any])


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))


def new_run_id() -> str:
    """A run id: the one the wrapper passed in ARENA_RUN_ID, else a fresh one."""
    given = os.environ.get(RUN_ID_ENV, "").strip()
    if given and len(given) <= 64 and all(c.isalnum() or c in "-_." for c in given):
        return given
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]


@dataclass
class _Record:
    command: str
    run_id: str
    started: float
    as_json: bool
    output: Path | None
    snapshots_at_start: int = 0
    error: str | None = None
    done: bool = False

    def fields(self, ended: float | None) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "command": self.command,
            "started_at": _iso(self.started),
            "ended_at": None if ended is None else _iso(ended),
            "pid": os.getpid(),
        }

    def write(self, summary: Mapping[str, Any]) -> str | None:
        """Write the report files; their JSON path, or None when there is no run directory."""
        out = self.output
        if out is None or not _is_dir(out):  # bad input never creates a run directory
            return None
        from arena.nightly import night_report, write_report

        try:
            report = night_report(
                out,
                summary,
                started=self.started,
                snapshots_at_start=self.snapshots_at_start,
            )
            return str(write_report(out, report))
        except (OSError, ValueError) as exc:  # a report must never hide the run's own result
            click.echo(f"arena: warning: could not write the run report: {exc}", err=True)
            return None


_active: _Record | None = None


def _is_dir(path: Path) -> bool:
    """Whether `path` is a directory; False when it cannot even be looked up (a name too
    long, no permission): the command itself then says what is wrong with it."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _count_snapshots(out: Path | None) -> int:
    if out is None or not _is_dir(out / "log"):
        return 0
    from arena.nightly import read_history, snapshot_ids

    try:
        return len(snapshot_ids(read_history(out)))
    except (OSError, ValueError):
        return 0


def current_run_id() -> str | None:
    """The id of the recorded command running now (None outside one)."""
    return None if _active is None else _active.run_id


def note_failure(message: str) -> None:
    """Remember why a recorded command is about to exit early (called by `fail`)."""
    if _active is not None and _active.error is None:
        _active.error = message


def complete(report: Mapping[str, Any], code: int) -> dict[str, Any]:
    """The summary of a recorded command that ran: with the run's record and its report path.

    Writes the report files. Outside a recorded command, the summary as given.
    """
    out = dict(report)
    rec = _active
    if rec is None:
        return out
    rec.done = True
    if out.get("output"):
        rec.output = Path(str(out["output"]))
    out.update(rec.fields(time.time()))
    out["exit_code"] = int(code)
    out["report"] = rec.write(out)
    return out


def _fallback(rec: _Record, code: int) -> None:
    """Summary and report of a recorded command that ended without running (or crashed)."""
    summary: dict[str, Any] = {
        "exit_code": code,
        "error": rec.error,
        "output": None if rec.output is None else str(rec.output),
        **rec.fields(time.time()),
    }
    summary["report"] = rec.write(summary)
    if rec.as_json:
        click.echo(json.dumps(summary))


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


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
            rec = _Record(
                command=command,
                run_id=new_run_id(),
                started=time.time(),
                as_json=bool(kwargs.get("as_json")),
                output=output,
                snapshots_at_start=_count_snapshots(output),
            )
            _active = rec
            try:
                if output is not None and _is_dir(output):
                    rec.write(rec.fields(None))  # "running" until it ends
                return func(**kwargs)
            except SystemExit as exc:
                if not rec.done:
                    _fallback(rec, _exit_code(exc))
                raise
            except (click.exceptions.Exit, click.Abort):
                raise
            except KeyboardInterrupt:  # Ctrl-C outside a run's own handling (exit 130)
                if not rec.done:
                    rec.error = rec.error or "interrupted (SIGINT)"
                    _fallback(rec, 130)
                raise
            except Exception as exc:
                if not rec.done:
                    rec.error = rec.error or f"{type(exc).__name__}: {exc}"
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
