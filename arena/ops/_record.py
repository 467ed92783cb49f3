"""The status record of a run: one JSON object of the same shape for every way a run ends.

`arena run` and `arena retry-failed` write it to `DIR/last_run.json` and into
their report file (`DIR/reports/<run id>.json`, key `record`), print it with
`--json` (key `record`), POST it to the alert webhook and pipe it to the alert
command. Its JSON Schema ships as `arena/ops/run_record.schema.json`
(`RECORD_SCHEMA_PATH`); `schema_version` changes when a field changes meaning
or goes away (fields are only ever added within a version).

A run that never ended (killed with SIGKILL, the machine stopped) leaves a
record with no exit code; the next run that finds the directory unlocked
marks it `killed` (exit code 137), in its report file and in last_run.json.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.rundir._files import LAST_RUN, RUNS_FILE, iso_time, read_last_run, write_json_atomic

__all__ = [
    "CALL_FIELDS",
    "LAST_RUN",
    "RECORD_SCHEMA_PATH",
    "SCHEMA_VERSION",
    "STATUS_OF_EXIT",
    "build_record",
    "hostname",
    "iso_time",
    "append_run",
    "mark_report_killed",
    "read_last_run",
    "write_json_atomic",
    "write_last_run_record",
]

SCHEMA_VERSION = 1
RECORD_SCHEMA_PATH = Path(__file__).with_name("run_record.schema.json")

# Exit code -> the record's `status` (None: still running).
STATUS_OF_EXIT: dict[int | None, str] = {
    None: "running",
    0: "complete",
    1: "crashed",
    2: "bad_input",
    3: "partial",
    4: "budget",
    74: "storage",
    75: "locked",
    129: "interrupted",
    130: "interrupted",
    137: "killed",
    143: "interrupted",
}

# Call counts of the record (0 when the run made no call).
CALL_FIELDS = (
    "planned",
    "new",
    "stale",
    "retried",
    "skipped",
    "completed",
    "invalid",
    "failed",
    "pending",
    "deferred",
)


def hostname() -> str:
    """This machine's host name."""
    return socket.gethostname()


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out and out not in (float("inf"), float("-inf")) else None


def build_record(
    *,
    run_id: str,
    command: str,
    started: float,
    ended: float | None,
    exit_code: int | None,
    summary: Mapping[str, Any],
    output: str | None,
    config: str | None,
    error: str | None,
    exit_meaning: str,
    snapshot: Mapping[str, Any] | None = None,
    spent_total_usd: float | None = None,
    report: str | None = None,
    alert: Mapping[str, Any] | None = None,
    pid: int | None = None,
    host: str | None = None,
    killed_runs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The status record (see the module); `summary` is the run's JSON summary, or {}.
    `killed_runs`: the runs this one found killed (run id, start, spend)."""
    calls = {k: _int(summary.get(k)) for k in CALL_FIELDS}
    calls["open"] = calls["failed"] + calls["pending"]
    errors = [dict(e) for e in summary.get("errors", []) if isinstance(e, Mapping)][:50]
    snap = dict(snapshot or {})
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "command": command,
        "status": STATUS_OF_EXIT.get(exit_code, "failed"),
        "exit_code": exit_code,
        "exit_meaning": exit_meaning,
        "error": error,
        "started_at": iso_time(started),
        "ended_at": iso_time(ended),
        "started_unix": started,
        "ended_unix": ended,
        "wall_seconds": None if ended is None else max(0.0, ended - started),
        "call_loop_seconds": _float(summary.get("call_loop_seconds")),
        "pid": os.getpid() if pid is None else pid,
        "host": hostname() if host is None else host,
        "output": output,
        "config": config,
        "calls": calls,
        "spent_usd": _float(summary.get("spent_usd")) or 0.0,
        "spent_total_usd": spent_total_usd,
        "budget_stopped": bool(summary.get("budget_stopped", False)),
        "interrupted": bool(summary.get("interrupted", False)) or exit_code in (129, 130, 143),
        "errors": errors,
        "snapshot": {
            "added": bool(snap.get("added", False)),
            "number": snap.get("number"),
            "taken_unix": _float(snap.get("taken_unix")),
            "note": snap.get("note"),
        },
        "report": report,
        "alert": None if alert is None else dict(alert),
        "killed_runs": [
            {
                "run_id": str(k.get("run_id")),
                "started_at": k.get("started_at"),
                "spent_usd": _float(k.get("spent_usd")) or 0.0,
            }
            for k in killed_runs or []
        ],
    }


def write_last_run_record(directory: Path, record: Mapping[str, Any]) -> None:
    """DIR/last_run.json: the record of the latest run (its end, or that it is running).

    Atomic (a new file, then a rename). On a full disk, where no new file fits, the
    record is written over the old file's own space instead, compact, so that `arena
    status` never shows an earlier night as the last one."""
    path = directory / LAST_RUN
    try:
        write_json_atomic(path, dict(record))
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not path.is_file():
            raise
        with open(path, "r+b") as f:
            info = os.fstat(f.fileno())
            room = max(info.st_size, info.st_blocks * 512)  # what the file already holds
            for data in _smaller(record):
                text = json.dumps(data, separators=(",", ":"), default=str).encode()
                if len(text) + 1 <= room:
                    # padded to the old size: the file keeps its blocks for the next record
                    f.write(text + b" " * max(0, info.st_size - len(text) - 1) + b"\n")
                    f.truncate()
                    return
        raise


def append_run(directory: Path, record: Mapping[str, Any]) -> None:
    """One line for an ended run in DIR/runs.jsonl (`arena runs`), from its record."""
    calls = record.get("calls") or {}
    row = {
        "run_id": record.get("run_id"),
        "command": record.get("command"),
        "started_at": record.get("started_at"),
        "started_unix": record.get("started_unix"),
        "ended_at": record.get("ended_at"),
        "exit_code": record.get("exit_code"),
        "status": record.get("status"),
        "calls": sum(_int(calls.get(k)) for k in ("completed", "invalid", "failed")),
        "failed": _int(calls.get("failed")),
        "spent_usd": record.get("spent_usd"),
        "wall_seconds": record.get("wall_seconds"),
        "snapshot": (record.get("snapshot") or {}).get("number")
        if (record.get("snapshot") or {}).get("added")
        else None,
    }
    with open(directory / RUNS_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(row, default=str) + "\n")


def _smaller(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The record, then shorter forms of it (for a full disk): without the error list,
    then only what `arena status` shows."""
    full = dict(record)
    error = full.get("error")
    short = {**full, "errors": [], "error": error[:300] if isinstance(error, str) else error}
    keys = ("schema_version", "run_id", "command", "status", "exit_code", "exit_meaning")
    least = {k: full.get(k) for k in (*keys, "started_at", "ended_at", "started_unix")}
    least["ended_unix"] = full.get("ended_unix")
    return [full, short, least]


def _parse_time(text: Any, default: float) -> float:
    if isinstance(text, str):
        try:
            return time.mktime(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            pass
    return default


def mark_report_killed(
    directory: Path, path: Path, *, found_by: str, spent: Mapping[str, float] | None = None
) -> dict[str, Any] | None:
    """Rewrite the report file `path` of a run that never ended as killed (exit 137), and
    DIR/last_run.json when it is that run's; the run (id, start, what it spent: `spent`
    by run id), or None when it did end.

    The caller holds DIR's lock (so no run is going) or knows the run is gone.
    """
    from arena.ops._report import EXIT_MEANINGS, report_paths, write_report

    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("exit_code") is not None:
        return None
    run: dict[str, Any] = data["run"] if isinstance(data.get("run"), dict) else {}
    old: dict[str, Any] = data["record"] if isinstance(data.get("record"), dict) else {}
    run_id = str(run.get("run_id") or old.get("run_id") or path.stem)
    error = (
        "the run ended without an exit code (killed with SIGKILL, out of memory, or the "
        f"machine stopped); found by run {found_by}"
    )
    meaning = EXIT_MEANINGS.get(137, "killed")
    started = old.get("started_unix")
    record = build_record(
        run_id=run_id,
        command=str(run.get("command") or old.get("command") or "run"),
        started=float(started)
        if isinstance(started, int | float)
        else _parse_time(run.get("started_at"), path.stat().st_mtime),
        ended=None,
        exit_code=137,
        summary={"spent_usd": (spent or {}).get(run_id, 0.0)},
        output=run.get("output") or old.get("output"),
        config=old.get("config"),
        error=error,
        exit_meaning=meaning,
        snapshot=old.get("snapshot"),
        spent_total_usd=old.get("spent_total_usd"),
        report=str(report_paths(directory, run_id)[0]),
        pid=int(run.get("pid") or old.get("pid") or 0),
        host=str(old.get("host") or hostname()),
    )
    data.update(exit_code=137, exit_meaning=meaning, error=error, record=record)
    if data.get("snapshot_note") is None and not data.get("snapshot_added"):
        data["snapshot_note"] = "the run was killed"
    write_report(directory, data)
    last = read_last_run(directory)
    if last is not None and last.get("run_id") == run_id and last.get("exit_code") is None:
        write_last_run_record(directory, record)
    append_run(directory, record)
    return {
        "run_id": run_id,
        "started_at": record["started_at"],
        "spent_usd": record["spent_usd"],
    }
