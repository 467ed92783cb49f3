"""What a run tells the operator: alerts (webhook, command) and a Prometheus metrics file.

Both are by-products: a webhook that does not answer, a command that fails
or a metrics file that cannot be written is logged (stderr and
`DIR/reports/problems.log`) and never changes the run's exit code.

Alerts fire once per change of state: on a failure (exit 1, 2, 74) or a
budget stop (4) unless the night before ended the same way and was alerted,
on the Nth partial night in a row (3; N = `after_partial_nights`), and on
the first success (0) after an alert. Interrupted and killed nights neither
count nor break a streak; a run that finds earlier runs killed says so in its
alert. A run refused by the lock (75) writes nothing in the directory: it
alerts only when the holder has run longer than `after_seconds`; the holder
itself alerts once when it passes `after_seconds`. The streak, what was
alerted and the alerts not delivered yet (sent again by the next run) live in
`DIR/ops_state.json`, with the time of the last success (the metrics'
`arena_last_success_timestamp_seconds`).

A delivery cannot hurt the run: each attempt has a total deadline (`timeout`),
a webhook's answer is read up to 64 KiB and a redirect is not followed (it is
logged), a command's output is discarded but for the first 4 KiB of its
stderr; a failed attempt is tried again (3 attempts, backoff 0.5 s, 1 s). A
webhook URL is printed without its path and query (they may hold a token).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import threading
import time
import traceback
import urllib.parse
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
    "metrics_file_problem",
    "overdue_reason",
    "parse_age",
    "read_ops_state",
    "redact_url",
    "save_ops_state",
    "send_alerts",
    "write_metrics",
]

OPS_LOG = "problems.log"  # under DIR/reports/

FAILURE_CODES = (1, 2, 74)
PARTIAL_CODES = (3,)
NEUTRAL_CODES = (75, 129, 130, 137, 143)  # locked, interrupted or killed: no streak change

ATTEMPTS = 3  # deliveries of one alert per channel
BACKOFF_SECONDS = 0.5  # before the 2nd attempt; doubled before each next one
READ_CAP = 64 * 1024  # bytes of a webhook's answer read back
STDERR_CAP = 4096  # bytes of an alert command's stderr kept (the rest is discarded)
UNDELIVERED_KEPT = 20  # undelivered alerts kept for the next run (the latest ones)


@dataclass(frozen=True)
class AlertSettings:
    """The tournament's `alerts:` and `metrics_file:` (paths resolved against the YAML)."""

    webhook: str | None = None
    command: str | None = None
    after_partial_nights: int = 3
    timeout: float = 10.0
    metrics_file: Path | None = None
    after_seconds: float | None = None  # alert when a run goes on longer than this

    @property
    def alerting(self) -> bool:
        """Whether any alert channel is configured."""
        return self.webhook is not None or self.command is not None


def log_problem(directory: Path | None, message: str, *, trace: bool = False) -> None:
    """A by-product failed: one line on stderr, and the line (with the traceback when
    `trace`) appended to DIR/reports/problems.log. Never raises."""
    import click

    message = redact_text(message)
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
    """Why this run's end is worth an alert (None: it is not), and the next state.

    One alert per change of state: a failure or a budget stop that repeats the
    night before's (already alerted) does not alert again."""
    new = dict(state)
    reason: str | None = None
    if exit_code in NEUTRAL_CODES:
        return None, new
    repeated = state.get("alerted") and state.get("alerted_exit") == exit_code
    if exit_code in PARTIAL_CODES:
        new["partial_streak"] = int(state.get("partial_streak", 0)) + 1
        if new["partial_streak"] == after_partial_nights:
            reason = f"{after_partial_nights} partial night(s) in a row (exit {exit_code} tonight)"
    else:
        new["partial_streak"] = 0
        if exit_code in FAILURE_CODES and not repeated:
            reason = f"the run failed (exit {exit_code})"
        elif exit_code == 4 and not repeated:
            reason = "the run stopped at its budget (exit 4)"
        elif exit_code == 0 and state.get("alerted"):
            reason = "recovered: the first complete run after an alert"
    if exit_code == 0:
        new["alerted"] = False
        new["alerted_exit"] = None
    elif reason is not None:
        new["alerted"] = True
        new["alerted_exit"] = exit_code
    return reason, new


def overdue_reason(
    settings: AlertSettings, holder: Mapping[str, Any], now: float | None
) -> str | None:
    """Why a run refused by the lock alerts: the holder has run past `after_seconds`."""
    started = holder.get("started_at")
    if settings.after_seconds is None or not isinstance(started, int | float):
        return None
    age = (time.time() if now is None else now) - float(started)
    if age <= settings.after_seconds:
        return None
    return (
        f"a run could not start: the run holding the directory (pid {holder.get('pid')} on "
        f"{holder.get('host')}) has gone on for {age:.0f} s, longer than "
        f"alerts.after_seconds ({settings.after_seconds:g} s)"
    )


def save_ops_state(directory: Path, state: Mapping[str, Any]) -> None:
    """Write DIR/ops_state.json atomically."""
    write_json_atomic(directory / OPS_STATE, dict(state))


_URL = re.compile(r"https?://[^\s'\"]*[^\s'\".,:;)]")


def redact_url(url: str) -> str:
    """A webhook URL fit to print: scheme, host and port; its path and query, which may
    hold a token (Slack's hooks.slack.com/services/T../B../secret), become `***`."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "***"
    rest = "/***" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{host}{port}{rest}"


def redact_text(text: str) -> str:
    """`text` with every URL in it redacted (`redact_url`)."""
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def send_alerts(
    settings: AlertSettings, record: Mapping[str, Any], directory: Path, state: dict[str, Any]
) -> dict[str, Any]:
    """Deliver the alerts earlier runs could not, then this record's (when it has one);
    the state with the ones still undelivered (kept for the next run)."""
    new = dict(state)
    waiting = [r for r in state.get("undelivered") or [] if isinstance(r, dict)]
    if record.get("alert") is not None:
        waiting.append(dict(record))
    left = []
    if settings.alerting:
        for item in waiting:
            if deliver_alert(settings, item, directory):
                left.append(item)
    new["undelivered"] = left[-UNDELIVERED_KEPT:]
    return new


def deliver_alert(
    settings: AlertSettings, record: Mapping[str, Any], directory: Path | None
) -> list[str]:
    """POST the record to the webhook and pipe it to the command; what failed, as lines
    (each also logged). Each channel is tried up to ATTEMPTS times. Never raises."""
    body = json.dumps(record, default=str).encode()
    problems: list[str] = []
    channels: list[tuple[str, Any]] = []
    if settings.webhook is not None:
        channels.append((f"alert webhook {redact_url(settings.webhook)}", _post))
    if settings.command is not None:
        channels.append((f"alert command {redact_text(settings.command)!r}", _pipe))
    run_id = str(record.get("run_id") or "")
    for name, send in channels:
        pause = BACKOFF_SECONDS
        for attempt in range(1, ATTEMPTS + 1):
            problem, again = send(settings, body, run_id)
            if problem is None:
                break
            if not again or attempt == ATTEMPTS:
                problems.append(f"{name}: {problem}")
                break
            log_problem(directory, f"{name}: {problem} (attempt {attempt}, trying again)")
            time.sleep(pause)
            pause *= 2
    for line in problems:
        log_problem(directory, line)
    return problems


def _within(deadline: float, work: Any, stop: Any) -> Any:
    """Run `work()` in a thread for at most `deadline` seconds; past it, `stop()` (which
    unblocks it) and raise TimeoutError. Its result, or its exception raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, name="arena-alert", daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        stop()
        thread.join(1.0)
        raise TimeoutError(f"no answer within {deadline:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _post(settings: AlertSettings, body: bytes, run_id: str) -> tuple[str | None, bool]:
    """One POST of the record: (the problem or None, whether to try again)."""
    import http.client

    url = settings.webhook or ""
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname or "", parts.port, timeout=settings.timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    opened: list[Any] = []  # the socket, to shut it from outside at the deadline

    def work() -> tuple[int, str | None]:
        conn.connect()
        opened.append(conn.sock)
        conn.request(
            "POST",
            target,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": "arena-alert",
                "X-Arena-Run-Id": run_id,
            },
        )
        response = conn.getresponse()
        response.read(READ_CAP)  # what the server says back: never more than this
        return response.status, response.getheader("Location")

    def stop() -> None:
        for sock in opened:
            try:
                sock.shutdown(2)
            except OSError:
                pass

    try:
        status, location = _within(settings.timeout, work, stop)
    except TimeoutError as exc:
        return f"not delivered: {exc}", True
    except (OSError, ValueError, http.client.HTTPException) as exc:
        return f"not delivered: {exc}", True
    finally:
        conn.close()
    if 300 <= status < 400:
        where = redact_url(location) if location else "nowhere"
        return f"HTTP {status}: the redirect to {where} is not followed (fix the URL)", False
    if status >= 400:
        return f"HTTP {status}", status >= 500 or status == 429
    return None, False


def _pipe(settings: AlertSettings, body: bytes, run_id: str) -> tuple[str | None, bool]:
    """One run of the alert command with the record on stdin: (problem or None, again)."""
    try:
        proc = subprocess.Popen(
            shlex.split(settings.command or ""),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "ARENA_ALERT": "1", "ARENA_RUN_ID": run_id},
        )
    except (OSError, ValueError) as exc:
        return f"not run: {exc}", False
    kept = bytearray()

    def drain() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read(65536):
            if len(kept) < STDERR_CAP:
                kept.extend(chunk[: STDERR_CAP - len(kept)])

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(body)
            proc.stdin.close()
        except OSError:  # it did not read its input: its exit code says the rest
            pass

    threads = [threading.Thread(target=f, daemon=True) for f in (drain, feed)]
    for thread in threads:
        thread.start()
    try:
        code = proc.wait(timeout=settings.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"killed: still running after {settings.timeout:g} s", True
    finally:
        for thread in threads:
            thread.join(1.0)
    if code != 0:
        err = kept.decode(errors="replace").strip()[:200]
        return f"exit {code}" + (f": {redact_text(err)}" if err else ""), True
    return None, False


def metrics_file_problem(path: Path) -> str | None:
    """Why `metrics_file` cannot be written there (None: it can): the folder must exist
    and the file, when there, be a regular file (never a device, a folder or a link)."""
    if not path.parent.is_dir():
        return f"folder {path.parent} does not exist (the metrics will not be written)"
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISREG(mode):
        return f"{path} is not a regular file (the metrics will not be written over it)"
    return None


def write_metrics(
    path: Path,
    record: Mapping[str, Any],
    state: Mapping[str, Any],
    now: float | None = None,
    *,
    running: Mapping[str, Any] | None = None,
) -> None:
    """Write the run's metrics to `path` in the Prometheus text format, atomically
    (a temporary file in the same folder, then a rename), for node-exporter's
    textfile collector. Labelled with the run directory (absolute).

    `record` is the last ended run's record; `running` ({started_unix,
    progress_unix, output}) says a run is going now (the heartbeat: written while
    it works), None that none is. Only a regular file in an existing folder is
    written (`metrics_file_problem`; ValueError otherwise)."""
    problem = metrics_file_problem(path)
    if problem is not None:
        raise ValueError(problem)
    from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

    registry = CollectorRegistry()
    labels = ["directory"]
    where = record.get("output") or (running or {}).get("output") or ""
    directory = os.path.abspath(str(where)) if where else ""

    def gauge(name: str, doc: str, value: float | None) -> None:
        g = Gauge(name, doc, labels, registry=registry)
        g.labels(directory).set(float("nan") if value is None else float(value))

    calls = record.get("calls") or {}
    snapshot = record.get("snapshot") or {}
    taken = snapshot.get("taken_unix")
    moment = time.time() if now is None else now
    gauge(
        "arena_run_in_progress",
        "1 while a run of the directory is going (its heartbeat), else 0.",
        0 if running is None else 1,
    )
    gauge(
        "arena_run_started_timestamp_seconds",
        "When the run going now started (NaN: none is going).",
        None if running is None else running.get("started_unix"),
    )
    gauge(
        "arena_run_last_progress_timestamp_seconds",
        "When the run going now last finished a call, or started (NaN: none is going).",
        None if running is None else running.get("progress_unix"),
    )
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
    killed = [k for k in record.get("killed_runs") or [] if isinstance(k, Mapping)]
    gauge(
        "arena_killed_runs_found",
        "Runs killed without an exit code that the last run found (their spend is in "
        "arena_killed_runs_spent_usd).",
        len(killed),
    )
    gauge(
        "arena_killed_runs_spent_usd",
        "What the killed runs the last run found had spent.",
        sum(float(k.get("spent_usd") or 0.0) for k in killed),
    )
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
