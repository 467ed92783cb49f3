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
from dataclasses import dataclass, field
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
    "run_spend",
    "warn_problem",
]

RUN_ID_ENV = "ARENA_RUN_ID"
LAST_RUN_NAME = "last_run.json"
LOCKED = 75

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
    holder: dict[str, Any] | None = None  # who held DIR's lock at the start (exit 75)
    killed: list[dict[str, Any]] = field(default_factory=list)  # runs found killed at start
    previous: str | None = None  # DIR/last_run.json before this run's "running" record

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

    def alert_settings_once(self) -> Any:
        """The tournament's `alerts:` and `metrics_file:` (read once; empty when unreadable)."""
        return self._alert_settings()

    def running_record(self) -> dict[str, Any]:
        """This run's record while it goes (no exit code yet), written nowhere."""
        from arena.ops._record import build_record

        return build_record(
            run_id=self.run_id,
            command=self.command,
            started=self.started,
            ended=None,
            exit_code=None,
            summary={},
            output=None if self.output is None else str(self.output),
            config=None if self.config is None else str(self.config),
            error=None,
            exit_meaning="running (no exit yet)",
            killed_runs=self.killed,
        )

    def start(self) -> None:
        """At the start: when no other run holds DIR, mark the runs that never ended as
        killed and say this one is running. When one does (this run will exit 75),
        nothing is written: the holder's record stays as it is."""
        out = self._directory()
        if out is None:
            return
        from arena.store import LockHeld, RunLock

        lock = RunLock(out)
        try:
            lock.acquire()
        except LockHeld as exc:
            self.holder = exc.holder or {}
            return
        except Exception as exc:  # noqa: BLE001 - the run itself says what is wrong
            warn_problem(out, f"could not take the lock of {out} to record the start: {exc}")
            return
        try:
            try:
                self.killed = mark_killed(out, self.run_id, locked=True)
            except Exception as exc:  # noqa: BLE001 - a by-product
                warn_problem(out, f"could not check for killed runs: {exc}")
            self.previous = _read_text(out / LAST_RUN_NAME)
            self.finish({**self.fields(None), "output": str(out)}, None)
            self.started_written = True
        finally:
            lock.release()

    def finish(self, summary: Mapping[str, Any], code: int | None) -> dict[str, Any]:
        """The run's status record, written to the report files and last_run.json; alerts
        and metrics when the run ended (`code` not None). Never raises.

        A run refused because another one holds DIR (exit 75) writes nothing there:
        its record is printed and may alert, the holder's state stays as it is."""
        from arena.ops._record import append_run, build_record, write_last_run_record
        from arena.ops._report import EXIT_MEANINGS, minimal_report, night_report, report_paths

        ended = None if code is None else time.time()
        out = self._directory()
        if code == LOCKED:
            return self._finish_locked(summary, ended, out)
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
            reason, state = _next_alert(out, code, settings, ended, self.killed)
        elif code is not None:
            from arena.ops._alerts import alert_reason

            reason = alert_reason(code, {}, 1)[0]  # no directory to keep a state in
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
            killed_runs=self.killed,
        )
        if out is not None and report is not None:
            record["report"] = _write_report(out, report, record)
            try:
                write_last_run_record(out, record)
            except Exception as exc:  # noqa: BLE001
                warn_problem(out, f"could not write {out / LAST_RUN_NAME}: {exc}")
            if code is not None:
                try:
                    append_run(out, record)
                except Exception as exc:  # noqa: BLE001
                    warn_problem(out, f"could not add run {self.run_id} to runs.jsonl: {exc}")
        if settings is not None:
            _alert_and_metrics(settings, record, out, state)
        return record

    def _finish_locked(
        self, summary: Mapping[str, Any], ended: float | None, out: Path | None
    ) -> dict[str, Any]:
        """The record of a run refused by the lock: printed, maybe alerted, never written."""
        from arena.ops._alerts import deliver_alert, overdue_reason
        from arena.ops._record import build_record
        from arena.ops._report import EXIT_MEANINGS

        if self.started_written and out is not None:
            self._take_back(out)  # lost the race for the lock after writing "running"
        settings = self._alert_settings()
        holder = self.holder or {}
        if not holder and out is not None:
            from arena.store import lock_holder

            holder = lock_holder(out) or {}
        reason = overdue_reason(settings, holder, ended)
        record = build_record(
            run_id=self.run_id,
            command=self.command,
            started=self.started,
            ended=ended,
            exit_code=LOCKED,
            summary=summary,
            output=None if self.output is None else str(self.output),
            config=None if self.config is None else str(self.config),
            error=summary.get("error") or self.error,
            exit_meaning=EXIT_MEANINGS.get(LOCKED, "locked"),
            report=None,
            alert={"reason": reason} if reason and settings.alerting else None,
        )
        if record["alert"] is not None:
            try:
                deliver_alert(settings, record, None)
            except Exception as exc:  # noqa: BLE001 - an alert never fails the run
                warn_problem(None, f"alert not delivered: {exc}")
        return record

    def _take_back(self, out: Path) -> None:
        """Remove this run's "running" record: another run took DIR in between."""
        from arena.ops._report import report_paths

        try:
            for path in report_paths(out, self.run_id):
                path.unlink(missing_ok=True)
            if self.previous is not None:
                from arena.rundir._files import write_json_atomic

                write_json_atomic(out / LAST_RUN_NAME, json.loads(self.previous))
        except Exception as exc:  # noqa: BLE001 - a by-product
            warn_problem(None, f"could not take back the start record of {self.run_id}: {exc}")


def _read_text(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
        json.loads(text)
    except (OSError, ValueError):
        return None
    return text


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
    out: Path, code: int, settings: Any, ended: float | None, killed: list[dict[str, Any]]
) -> tuple[str | None, dict[str, Any] | None]:
    from arena.ops._alerts import alert_reason
    from arena.rundir import read_ops_state

    try:
        state = read_ops_state(out)
        reason, new = alert_reason(code, state, settings.after_partial_nights)
    except Exception as exc:  # noqa: BLE001
        warn_problem(out, f"could not decide on an alert: {exc}")
        return None, None
    if killed:  # a run killed outright could not say so itself: this one does
        ids = ", ".join(str(k["run_id"]) for k in killed)
        spent = sum(float(k.get("spent_usd") or 0.0) for k in killed)
        line = f"{len(killed)} earlier run(s) killed without an exit code ({ids}; "
        line += f"spent ${spent:.4f})"
        reason = line if reason is None else f"{reason}; {line}"
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
    settings: Any, record: dict[str, Any], out: Path | None, state: dict[str, Any] | None
) -> None:
    """Send the record's alert (and those earlier runs could not deliver), keep the
    alert state in DIR/ops_state.json, write the metrics file."""
    from arena.ops._alerts import deliver_alert, send_alerts, write_metrics

    if out is not None and state is not None:
        try:
            state = send_alerts(settings, record, out, state)
        except Exception as exc:  # noqa: BLE001 - an alert never fails the run
            warn_problem(out, f"alert not delivered: {exc}")
        try:
            from arena.ops._alerts import save_ops_state

            save_ops_state(out, state)
        except Exception as exc:  # noqa: BLE001
            warn_problem(out, f"could not write the alert state of {out}: {exc}")
    elif record.get("alert") is not None:
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
        after_seconds=alerts.after_seconds,
        metrics_file=path,
    )


def mark_killed(out: Path, current: str, *, locked: bool = False) -> list[dict[str, Any]]:
    """Mark the runs of DIR that never ended as killed (their report and last_run.json);
    only while no run holds DIR's lock (`locked`: the caller holds it). Returns each
    one's run id, start and what it spent (its rows in the log carry its run id)."""
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
    if not locked:
        try:
            lock.acquire()
        except LockHeld:
            return []  # a run is going: it may be one of them
    try:
        spend = run_spend(out)
        found = []
        for path in unended:
            killed = mark_report_killed(out, path, found_by=current, spent=spend)
            if killed is not None:
                found.append(killed)
        return found
    finally:
        if not locked:
            lock.release()


def run_spend(out: Path) -> dict[str, float]:
    """What each run id of DIR spent, from the log and the spend ledger."""
    if not (out / "log").is_dir():
        return {}
    from arena.store import RunLog

    spent: dict[str, float] = {}
    for (_, _, run_id), usd in RunLog(out).spend_groups().items():
        spent[run_id] = spent.get(run_id, 0.0) + usd
    return spent


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
