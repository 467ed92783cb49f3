"""The record of one `arena run` / `arena retry-failed`, whatever its exit code.

A `RunRecord` is made when the command starts (its run id: `ARENA_RUN_ID`
from a wrapper script, else a new one). `start()` marks the directory's runs
that never ended as killed and writes this one's "running" record; `finish()`
builds the run's status record (`build_record`, the same shape for every
exit, with `schema_version`), writes it to DIR/last_run.json and into the
per-night report files (`write_report`), sends the alert the tournament's
`alerts:` asks for and writes its `metrics_file:`.

Reports, alerts and metrics are by-products: any exception in them is logged
with its traceback to DIR/reports/problems.log and never changes the exit
code; a minimal report is written when the full one cannot be. The CLI wraps
its run commands with it (`arena/cli/_record.py`).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "RUN_ID_ENV",
    "RunRecord",
    "alert_settings",
    "count_snapshots",
    "whole_run",
    "is_dir",
    "mark_killed",
    "new_run_id",
    "warn_problem",
]

RUN_ID_ENV = "ARENA_RUN_ID"

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


def warn_problem(directory: Path | None, message: str) -> None:
    """A by-product failed: logged with its traceback (arena.rundir log_problem)."""
    try:
        from arena.ops._alerts import log_problem

        log_problem(directory, message, trace=True)
    except Exception:  # noqa: BLE001 - logging must never end the run
        print(f"arena: warning: {message}", file=sys.stderr)


@dataclass
class RunRecord:
    """One recorded run command: what its record says, from its start to its end."""

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
        return out if out is not None and is_dir(out) else None

    def _alert_settings(self) -> Any:
        if self.settings is None:
            from arena.ops._alerts import AlertSettings

            try:
                self.settings = alert_settings(self.config)
            except Exception as exc:  # noqa: BLE001 - a by-product
                warn_problem(self._directory(), f"alerts and metrics settings not read: {exc}")
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
            warn_problem(out, f"could not check for killed runs: {exc}")
        self.finish({**self.fields(None), "output": str(out)}, None)
        self.started_written = True

    def finish(self, summary: Mapping[str, Any], code: int | None) -> dict[str, Any]:
        """The run's status record, written to the report files and last_run.json; alerts
        and metrics when the run ended (`code` not None). Never raises."""
        from arena.ops._record import build_record, write_last_run_record
        from arena.ops._report import EXIT_MEANINGS, minimal_report, night_report, report_paths

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
                warn_problem(out, f"run {self.run_id}: could not build the run report: {exc}")
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
                    from arena.ops._alerts import save_ops_state

                    save_ops_state(out, state)
            except Exception as exc:  # noqa: BLE001
                warn_problem(out, f"could not write {out / 'last_run.json'}: {exc}")
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
        warn_problem(out, f"could not sum the spend of {out}: {exc}")
        return None


def _next_alert(
    out: Path, code: int, settings: Any, ended: float | None
) -> tuple[str | None, dict[str, Any] | None]:
    from arena.ops._alerts import alert_reason
    from arena.rundir import read_ops_state

    try:
        state = read_ops_state(out)
        reason, new = alert_reason(code, state, settings.after_partial_nights)
    except Exception as exc:  # noqa: BLE001
        warn_problem(out, f"could not decide on an alert: {exc}")
        return None, None
    if code == 0:
        new["last_success_unix"] = ended
    if not settings.alerting:  # nothing can be sent: no alert is outstanding
        new["alerted"] = False
    return reason, new


def _write_report(out: Path, report: dict[str, Any], record: Mapping[str, Any]) -> str | None:
    from arena.ops._report import minimal_report, write_report

    report["record"] = dict(record)
    try:
        return str(write_report(out, report))
    except Exception as exc:  # noqa: BLE001 - a report must never hide the run's own result
        warn_problem(out, f"could not write the run report: {exc}")
    try:
        small = minimal_report(report["run"] | {"exit_code": report["exit_code"]})
        small["record"] = dict(record)
        return str(write_report(out, small))
    except Exception as exc:  # noqa: BLE001
        warn_problem(out, f"could not write even a minimal run report: {exc}")
        return None


def _alert_and_metrics(
    settings: Any, record: dict[str, Any], out: Path | None, state: Mapping[str, Any] | None
) -> None:
    from arena.ops._alerts import deliver_alert, write_metrics

    if record.get("alert") is not None:
        try:
            deliver_alert(settings, record, out)
        except Exception as exc:  # noqa: BLE001 - an alert never fails the run
            warn_problem(out, f"alert not delivered: {exc}")
    if settings.metrics_file is not None:
        try:
            write_metrics(settings.metrics_file, record, state or {})
        except Exception as exc:  # noqa: BLE001
            warn_problem(out, f"could not write the metrics file {settings.metrics_file}: {exc}")


def alert_settings(config: Path | None) -> Any:
    """The `alerts:` and `metrics_file:` of a tournament YAML, read on their own (so that
    a YAML with an error elsewhere still alerts); empty settings without a YAML."""
    from arena.config import AlertsConfig, read_yaml
    from arena.ops._alerts import AlertSettings

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
    from arena.ops._record import mark_report_killed
    from arena.ops._report import REPORTS_DIR
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


def is_dir(path: Path) -> bool:
    """Whether `path` is a directory; False when it cannot even be looked up (a name too
    long, no permission): the command itself then says what is wrong with it."""
    try:
        return path.is_dir()
    except OSError:
        return False


def count_snapshots(out: Path | None) -> int:
    if out is None or not is_dir(out / "log"):
        return 0
    from arena.rundir import read_history, snapshot_ids

    try:
        return len(snapshot_ids(read_history(out)))
    except Exception:  # noqa: BLE001 - counted again at the end
        return 0


def whole_run(out: dict[str, Any], rec: RunRecord, ended: float) -> None:
    """`wall_seconds` is the whole run; the call loop's own time is `call_loop_seconds`."""
    loop = out.get("wall_seconds")
    out["call_loop_seconds"] = float(loop) if isinstance(loop, int | float) else None
    out["wall_seconds"] = max(0.0, ended - rec.started)
