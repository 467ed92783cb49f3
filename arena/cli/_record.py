"""A record of every `arena run` / `arena retry-failed`, whatever its exit code.

`recorded(...)` wraps a command: it gives the run an id (`ARENA_RUN_ID` from
the wrapper script, else a new one), and at the end, for every exit code,
builds the run's status record (`arena.rundir` `build_record`, the same
shape for every exit, with `schema_version`), writes it to DIR/last_run.json
and into the per-night report files (`write_report`), sends the alert the
tournament's `alerts:` asks for and writes its `metrics_file:`. With
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
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from arena.cli._exit import exit_for
from arena.errors import ArenaError

__all__ = [
    "RUN_ID_ENV",
    "complete",
    "current_run_id",
    "note_failure",
    "recorded",
    "running",
    "tag_option",
]

RUN_ID_ENV = "ARENA_RUN_ID"

F = TypeVar("F", bound=Callable[..., Any])

# Report files looked at for runs that never ended (the latest ones).
_KILLED_SCAN = 50


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))


def new_run_id() -> str:
    """A run id: the one the wrapper passed in ARENA_RUN_ID, else a fresh one."""
    given = os.environ.get(RUN_ID_ENV, "").strip()
    if given and len(given) <= 64 and all(c.isalnum() or c in "-_." for c in given):
        return given
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]


def _warn(directory: Path | None, message: str) -> None:
    """A by-product failed: logged with its traceback (arena.rundir log_problem)."""
    try:
        from arena.ops import log_problem

        log_problem(directory, message, trace=True)
    except Exception:  # noqa: BLE001 - logging must never end the run
        click.echo(f"arena: warning: {message}", err=True)


@dataclass
class _Record:
    command: str
    run_id: str
    started: float
    as_json: bool
    output: Path | None
    config: Path | None = None
    snapshots_at_start: int = 0
    error: str | None = None
    done: bool = False
    settings: Any = None  # AlertSettings, loaded once
    started_written: bool = False  # the "running" record is on disk

    def fields(self, ended: float | None) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "command": self.command,
            "started_at": _iso(self.started),
            "ended_at": None if ended is None else _iso(ended),
            "pid": os.getpid(),
        }

    def _directory(self) -> Path | None:
        out = self.output
        # bad input never creates a run directory (nor can one too long a name)
        return out if out is not None and _is_dir(out) else None

    def _alert_settings(self) -> Any:
        if self.settings is None:
            from arena.ops import AlertSettings

            try:
                self.settings = alert_settings(self.config)
            except Exception as exc:  # noqa: BLE001 - a by-product
                _warn(self._directory(), f"alerts and metrics settings not read: {exc}")
                self.settings = AlertSettings()
        return self.settings

    def start(self) -> None:
        """At the start: mark runs that never ended as killed, then say this one is running."""
        out = self._directory()
        if out is None:
            return
        try:
            mark_killed(out, self.run_id)
        except Exception as exc:  # noqa: BLE001 - a by-product
            _warn(out, f"could not check for killed runs: {exc}")
        self.finish({**self.fields(None), "output": str(out)}, None)
        self.started_written = True

    def finish(self, summary: Mapping[str, Any], code: int | None) -> dict[str, Any]:
        """The run's status record, written to the report files and last_run.json; alerts
        and metrics when the run ended (`code` not None). Never raises."""
        from arena.ops import (
            EXIT_MEANINGS,
            build_record,
            minimal_report,
            night_report,
            report_paths,
            write_last_run_record,
        )

        ended = None if code is None else time.time()
        out = self._directory()
        report: dict[str, Any] | None = None
        if out is not None:
            try:
                report = night_report(
                    out,
                    summary,
                    started=self.started,
                    snapshots_at_start=self.snapshots_at_start,
                )
            except Exception as exc:  # noqa: BLE001 - a report must never hide the result
                _warn(out, f"run {self.run_id}: could not build the run report: {exc}")
                report = minimal_report(summary)
        spent_total = _spent_total(out)
        settings = self._alert_settings() if code is not None else None
        reason, state = None, None
        if code is not None and out is not None:
            reason, state = _next_alert(out, code, settings, ended)
        elif code is not None and code not in (0, 3, 75, 129, 130, 137, 143):
            reason = f"the run failed (exit {code})"  # no directory to keep a state in
        meaning = "running (no exit yet)" if code is None else EXIT_MEANINGS.get(code, "other")
        record = build_record(
            run_id=self.run_id,
            command=self.command,
            started=self.started,
            ended=ended,
            exit_code=code,
            summary=summary,
            output=None if self.output is None else str(self.output),
            config=None if self.config is None else str(self.config),
            error=summary.get("error") or self.error,
            exit_meaning=meaning,
            snapshot=None if report is None else report.get("snapshot"),
            spent_total_usd=spent_total,
            report=None if out is None else str(report_paths(out, self.run_id)[0]),
            alert={"reason": reason}
            if reason and settings is not None and settings.alerting
            else None,
        )
        if out is not None and report is not None:
            record["report"] = _write_report(out, report, record)
            try:
                write_last_run_record(out, record)
                if state is not None:
                    from arena.ops import save_ops_state

                    save_ops_state(out, state)
            except Exception as exc:  # noqa: BLE001
                _warn(out, f"could not write {out / 'last_run.json'}: {exc}")
        if settings is not None:
            _alert_and_metrics(settings, record, out, state)
        return record


def _spent_total(out: Path | None) -> float | None:
    if out is None or not (out / "log").is_dir():
        return None
    try:
        from arena.store import RunLog

        return RunLog(out).spent_usd()
    except Exception as exc:  # noqa: BLE001 - a by-product
        _warn(out, f"could not sum the spend of {out}: {exc}")
        return None


def _next_alert(
    out: Path, code: int, settings: Any, ended: float | None
) -> tuple[str | None, dict[str, Any] | None]:
    from arena.ops import alert_reason
    from arena.rundir import read_ops_state

    try:
        state = read_ops_state(out)
        reason, new = alert_reason(code, state, settings.after_partial_nights)
    except Exception as exc:  # noqa: BLE001
        _warn(out, f"could not decide on an alert: {exc}")
        return None, None
    if code == 0:
        new["last_success_unix"] = ended
    if not settings.alerting:  # nothing can be sent: no alert is outstanding
        new["alerted"] = False
    return reason, new


def _write_report(out: Path, report: dict[str, Any], record: Mapping[str, Any]) -> str | None:
    from arena.ops import minimal_report, write_report

    report["record"] = dict(record)
    try:
        return str(write_report(out, report))
    except Exception as exc:  # noqa: BLE001 - a report must never hide the run's own result
        _warn(out, f"could not write the run report: {exc}")
    try:
        small = minimal_report(report["run"] | {"exit_code": report["exit_code"]})
        small["record"] = dict(record)
        return str(write_report(out, small))
    except Exception as exc:  # noqa: BLE001
        _warn(out, f"could not write even a minimal run report: {exc}")
        return None


def _alert_and_metrics(
    settings: Any, record: dict[str, Any], out: Path | None, state: Mapping[str, Any] | None
) -> None:
    from arena.ops import deliver_alert, write_metrics

    if record.get("alert") is not None:
        try:
            deliver_alert(settings, record, out)
        except Exception as exc:  # noqa: BLE001 - an alert never fails the run
            _warn(out, f"alert not delivered: {exc}")
    if settings.metrics_file is not None:
        try:
            write_metrics(settings.metrics_file, record, state or {})
        except Exception as exc:  # noqa: BLE001
            _warn(out, f"could not write the metrics file {settings.metrics_file}: {exc}")


def alert_settings(config: Path | None) -> Any:
    """The `alerts:` and `metrics_file:` of a tournament YAML, read on their own (so that
    a YAML with an error elsewhere still alerts); empty settings without a YAML."""
    from arena.config import AlertsConfig, read_yaml
    from arena.ops import AlertSettings

    if config is None or not config.is_file():
        return AlertSettings()
    data = read_yaml(config)
    if not isinstance(data, dict):
        return AlertSettings()
    alerts = AlertsConfig.model_validate(data.get("alerts") or {})
    metrics = data.get("metrics_file")
    path = None
    if isinstance(metrics, str) and metrics:
        path = Path(metrics) if Path(metrics).is_absolute() else config.parent / metrics
    return AlertSettings(
        webhook=alerts.webhook,
        command=alerts.command,
        after_partial_nights=alerts.after_partial_nights,
        timeout=alerts.timeout,
        metrics_file=path,
    )


def mark_killed(out: Path, current: str) -> list[str]:
    """Mark the runs of DIR that never ended as killed (their report and last_run.json);
    only while no run holds DIR's lock. Returns their run ids."""
    from arena.ops import REPORTS_DIR, mark_report_killed
    from arena.store import LockHeld, RunLock

    folder = out / REPORTS_DIR
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)[-_KILLED_SCAN:]
    unended = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        run = data.get("run") if isinstance(data, dict) else None
        if not isinstance(run, dict) or data.get("exit_code") is not None:
            continue
        if run.get("run_id") == current:
            continue
        unended.append(path)
    if not unended:
        return []
    lock = RunLock(out)
    try:
        lock.acquire()
    except LockHeld:
        return []  # a run is going: it may be one of them
    try:
        return [
            run_id
            for path in unended
            if (run_id := mark_report_killed(out, path, found_by=current)) is not None
        ]
    finally:
        lock.release()


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
    from arena.rundir import read_history, snapshot_ids

    try:
        return len(snapshot_ids(read_history(out)))
    except Exception:  # noqa: BLE001 - counted again at the end
        return 0


def running(directory: Path) -> None:
    """The run's calls start in `directory`: write its "running" record now unless it is
    already there (a first night's directory did not exist when the command started)."""
    rec = _active
    if rec is None or rec.started_written:
        return
    rec.output = Path(directory)
    rec.finish({**rec.fields(None), "output": str(directory)}, None)
    rec.started_written = True


def current_run_id() -> str | None:
    """The id of the recorded command running now (None outside one)."""
    return None if _active is None else _active.run_id


def note_failure(message: str) -> None:
    """Remember why a recorded command is about to exit early (called by `fail`)."""
    if _active is not None and _active.error is None:
        _active.error = message


def _whole_run(out: dict[str, Any], rec: _Record, ended: float) -> None:
    """`wall_seconds` is the whole run; the call loop's own time is `call_loop_seconds`."""
    loop = out.get("wall_seconds")
    out["call_loop_seconds"] = float(loop) if isinstance(loop, int | float) else None
    out["wall_seconds"] = max(0.0, ended - rec.started)


def complete(report: Mapping[str, Any], code: int) -> dict[str, Any]:
    """The summary of a recorded command that ran: with the run's record and its report path.

    Writes the report files, last_run.json, alerts and metrics. Outside a
    recorded command, the summary as given.
    """
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
    _whole_run(out, rec, ended)
    record = rec.finish(out, int(code))
    out["report"] = record["report"]
    out["record"] = record
    return out


def _fallback(rec: _Record, code: int) -> None:
    """Summary and report of a recorded command that ended without running (or crashed)."""
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
            rec = _Record(
                command=command,
                run_id=new_run_id(),
                started=time.time(),
                as_json=bool(kwargs.get("as_json")),
                output=output,
                config=config,
                snapshots_at_start=_count_snapshots(output),
            )
            _active = rec
            try:
                rec.start()  # "running" until it ends
                return func(**kwargs)
            except SystemExit as exc:
                if not rec.done:
                    _fallback(rec, _exit_code(exc))
                raise
            except KeyboardInterrupt:
                if not rec.done:
                    rec.error = rec.error or "interrupted (SIGINT)"
                    _fallback(rec, 130)
                raise
            except (click.exceptions.Exit, click.Abort):
                raise
            except ArenaError as exc:  # the CLI exits with its kind's code (_exit.py)
                if not rec.done:
                    rec.error = rec.error or str(exc)
                    _fallback(rec, int(exit_for(exc) or 1))
                raise
            except Exception as exc:
                if not rec.done:
                    rec.error = rec.error or f"{type(exc).__name__}: {exc}"
                    _warn(
                        rec.output if rec.output is not None and _is_dir(rec.output) else None,
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
