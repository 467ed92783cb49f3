"""What a run tells the operator: alerts (webhook, command) and a Prometheus metrics file.

Both are by-products: a webhook that does not answer, a command that fails
or a metrics file that cannot be written is logged (stderr and
`DIR/reports/problems.log`) and never changes the run's exit code.

Alerts fire on a failure (exit 1, 2, 74), a budget stop (4), the Nth
partial or locked night in a row (3, 75; N = `after_partial_nights`), and
on the first success (0) after an alert. Interrupted and killed nights
neither count nor break a streak. The streak and whether an alert is
outstanding live in `DIR/ops_state.json`, with the time of the last
success (the metrics' `arena_last_success_timestamp_seconds`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.rundir._files import OPS_STATE, last_success, read_ops_state, write_json_atomic

__all__ = [
    "OPS_LOG",
    "OPS_STATE",
    "AlertSettings",
    "alert_reason",
    "deliver_alert",
    "last_success",
    "log_problem",
    "parse_age",
    "read_ops_state",
    "save_ops_state",
    "write_metrics",
]

OPS_LOG = "problems.log"  # under DIR/reports/

FAILURE_CODES = (1, 2, 74)
PARTIAL_CODES = (3, 75)
NEUTRAL_CODES = (129, 130, 137, 143)  # interrupted or killed: no streak change


@dataclass(frozen=True)
class AlertSettings:
    """The tournament's `alerts:` and `metrics_file:` (paths resolved against the YAML)."""

    webhook: str | None = None
    command: str | None = None
    after_partial_nights: int = 3
    timeout: float = 10.0
    metrics_file: Path | None = None

    @property
    def alerting(self) -> bool:
        """Whether any alert channel is configured."""
        return self.webhook is not None or self.command is not None


def log_problem(directory: Path | None, message: str, *, trace: bool = False) -> None:
    """A by-product failed: one line on stderr, and the line (with the traceback when
    `trace`) appended to DIR/reports/problems.log. Never raises."""
    import click

    line = f"arena: warning: {message}"
    try:
        click.echo(line, err=True)
    except Exception:  # noqa: BLE001 - stderr closed: nothing more to do
        pass
    if directory is None or not directory.is_dir():
        return
    try:
        folder = directory / "reports"
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        text = f"[{stamp}] {message}\n"
        if trace:
            text += traceback.format_exc()
        with open(folder / OPS_LOG, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass


def alert_reason(
    exit_code: int, state: Mapping[str, Any], after_partial_nights: int
) -> tuple[str | None, dict[str, Any]]:
    """Why this run's end is worth an alert (None: it is not), and the next state."""
    new = dict(state)
    reason: str | None = None
    if exit_code in NEUTRAL_CODES:
        return None, new
    if exit_code in PARTIAL_CODES:
        new["partial_streak"] = int(state.get("partial_streak", 0)) + 1
        if new["partial_streak"] == after_partial_nights:
            reason = (
                f"{after_partial_nights} partial or locked night(s) in a row "
                f"(exit {exit_code} tonight)"
            )
    else:
        new["partial_streak"] = 0
        if exit_code in FAILURE_CODES:
            reason = f"the run failed (exit {exit_code})"
        elif exit_code == 4:
            reason = "the run stopped at its budget (exit 4)"
        elif exit_code == 0 and state.get("alerted"):
            reason = "recovered: the first complete run after an alert"
    if exit_code == 0:
        new["alerted"] = False
    elif reason is not None:
        new["alerted"] = True
    return reason, new


def save_ops_state(directory: Path, state: Mapping[str, Any]) -> None:
    """Write DIR/ops_state.json atomically."""
    write_json_atomic(directory / OPS_STATE, dict(state))


def deliver_alert(
    settings: AlertSettings, record: Mapping[str, Any], directory: Path | None
) -> list[str]:
    """POST the record to the webhook and pipe it to the command; what failed, as lines
    (each also logged). Never raises."""
    body = json.dumps(record, default=str).encode()
    problems: list[str] = []
    if settings.webhook is not None:
        import urllib.error  # here: `arena status` reads the ops state, it sends no alert
        import urllib.request

        request = urllib.request.Request(
            settings.webhook,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "arena-alert"},
        )
        try:
            with urllib.request.urlopen(request, timeout=settings.timeout) as response:
                response.read()
        except urllib.error.HTTPError as exc:
            problems.append(f"alert webhook {settings.webhook}: HTTP {exc.code}")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            problems.append(f"alert webhook {settings.webhook}: not delivered: {reason}")
    if settings.command is not None:
        try:
            done = subprocess.run(
                shlex.split(settings.command),
                input=body,
                capture_output=True,
                timeout=settings.timeout,
                check=False,
                env={**os.environ, "ARENA_ALERT": "1"},
            )
            if done.returncode != 0:
                err = done.stderr.decode(errors="replace").strip()[:200]
                problems.append(
                    f"alert command {settings.command!r}: exit {done.returncode}"
                    + (f": {err}" if err else "")
                )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            problems.append(f"alert command {settings.command!r}: not run: {exc}")
    for line in problems:
        log_problem(directory, line)
    return problems


def write_metrics(
    path: Path, record: Mapping[str, Any], state: Mapping[str, Any], now: float | None = None
) -> None:
    """Write the run's metrics to `path` in the Prometheus text format, atomically
    (a temporary file in the same folder, then a rename), for node-exporter's
    textfile collector. Labelled with the run directory."""
    from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

    registry = CollectorRegistry()
    labels = ["directory"]
    directory = str(record.get("output") or "")

    def gauge(name: str, doc: str, value: float | None) -> None:
        g = Gauge(name, doc, labels, registry=registry)
        g.labels(directory).set(float("nan") if value is None else float(value))

    calls = record.get("calls") or {}
    snapshot = record.get("snapshot") or {}
    taken = snapshot.get("taken_unix")
    moment = time.time() if now is None else now
    gauge("arena_last_run_timestamp_seconds", "When the last run ended.", record.get("ended_unix"))
    gauge("arena_last_run_exit_code", "Exit code of the last run.", record.get("exit_code"))
    gauge(
        "arena_last_success_timestamp_seconds",
        "When the last run that exited 0 ended (NaN: none yet).",
        state.get("last_success_unix"),
    )
    gauge("arena_run_duration_seconds", "Wall time of the last run.", record.get("wall_seconds"))
    gauge(
        "arena_run_call_loop_seconds",
        "Time the last run spent making calls.",
        record.get("call_loop_seconds"),
    )
    made = int(calls.get("completed", 0)) + int(calls.get("invalid", 0))
    made += int(calls.get("failed", 0))
    gauge("arena_run_calls_made", "Calls the last run made (completed, invalid, failed).", made)
    gauge("arena_run_calls_failed", "Calls of the last run that failed.", calls.get("failed", 0))
    gauge(
        "arena_run_calls_open",
        "Calls of the last run left without a result (failed or pending).",
        calls.get("open", 0),
    )
    gauge("arena_run_spent_usd", "What the last run spent.", record.get("spent_usd"))
    gauge(
        "arena_tournament_spent_usd",
        "What every run of the directory spent together.",
        record.get("spent_total_usd"),
    )
    gauge(
        "arena_snapshot_age_seconds",
        "Age of the latest leaderboard snapshot (NaN: none yet).",
        None if taken is None else max(0.0, moment - float(taken)),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(str(path), registry)


_AGE_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_age(text: str) -> float:
    """Seconds in an age such as 26h, 90m, 2d, 1d12h or 3600s (ValueError otherwise)."""
    value = text.strip().lower()
    parts = _AGE_PART.findall(value)
    if not parts or _AGE_PART.sub("", value).strip():
        raise ValueError(f"{text!r} is not an age: give a number and a unit, e.g. 26h, 90m, 2d")
    return sum(float(n) * _AGE_UNITS[u] for n, u in parts)
