"""The run directory's small state files, as the commands that only read them need them.

`DIR/last_run.json` (the latest run's record), `DIR/ops_state.json` (the
alert streak and the last success) and the atomic JSON write every writer of
them uses. `arena.ops` builds and writes the records; `arena status` reads
them through this module, so status never loads the operations code.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = [
    "LAST_RUN",
    "OPS_STATE",
    "iso_time",
    "last_success",
    "live_last_run",
    "lock_state",
    "process_alive",
    "read_last_run",
    "read_ops_state",
    "read_runs",
    "RUNS_FILE",
    "RUN_COLUMNS",
    "write_json_atomic",
]

LAST_RUN = "last_run.json"
OPS_STATE = "ops_state.json"
# One line per ended run (and per run found killed), appended by the run record; `arena
# gc` never prunes it (the report files it may): `arena runs DIR` reads it.
RUNS_FILE = "runs.jsonl"
RUN_COLUMNS = (
    "run_id",
    "command",
    "started_at",
    "ended_at",
    "exit_code",
    "status",
    "calls",
    "failed",
    "spent_usd",
    "wall_seconds",
    "snapshot",
)


def iso_time(at: float | None) -> str | None:
    """Local time with its UTC offset, e.g. 2026-03-02T02:15:07+0100."""
    if at is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to `path` through a temporary file and a rename (never half written)."""
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# The fields of a run record that readers use, and their JSON types (null allowed).
_RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "run_id": (str,),
    "command": (str,),
    "exit_code": (int,),
    "exit_meaning": (str,),
    "started_at": (str,),
    "ended_at": (str,),
    "calls": (dict,),
    "errors": (list,),
    "budget_stopped": (bool,),
    "interrupted": (bool,),
    "pending": (int,),
    "spent_usd": (int, float),
    "spent_total_usd": (int, float),
}


def record_shape_problem(data: Any) -> str | None:
    """Why `data` is not a run record as readers need it (None: it is one)."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    for key, types in _RECORD_FIELDS.items():
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) and bool not in types:
            return f"{key}: {value!r} is not {types[0].__name__}"
        if not isinstance(value, types):
            return f"{key}: {value!r} is not {types[0].__name__}"
    if any(not isinstance(e, dict) for e in data.get("errors") or []):
        return "errors: every entry must be an object"
    return None


def read_last_run(directory: Path) -> dict[str, Any] | None:
    """DIR/last_run.json, or None when missing or unreadable; a file that is not a run
    record is reported (the file and the fix) and read as none."""
    path = directory / LAST_RUN
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        problem: str | None = f"cannot be read: {exc}"
    else:
        problem = record_shape_problem(data)
    if problem is not None:
        logging.getLogger("arena.rundir").warning(
            "arena: warning: %s is not a run record (%s): ignored; the next `arena run` "
            "writes it again (the run reports in reports/ keep every run's record)",
            path,
            problem,
        )
        return None
    return data  # type: ignore[no-any-return]


KILLED_MEANING = (
    "killed: the process is gone without an exit code (SIGKILL, out of memory, the "
    "machine stopped); the next run records it as exit 137"
)


def process_alive(pid: int, host: str | None, started: float | None) -> bool | None:
    """Whether the process `pid` of a run started at `started` on `host` still runs: None
    when it cannot be told from here (another host). A pid reused by a process that
    started after the run (Linux: /proc/PID/stat) is not that run."""
    if host is not None and host != socket.gethostname():
        return None
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user
    except OSError:
        return None
    if started is None:
        return True
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22: start time after boot, in clock ticks
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        begun = boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return True
    return begun <= started + 5.0  # a process started after the run: the pid was reused


def live_last_run(directory: Path) -> dict[str, Any] | None:
    """DIR/last_run.json as `arena status` shows it: a record that says "running" gets
    `alive` (its pid checked on this host; None from another host), and a run whose
    process is gone reads `killed` at once (its exit code stays null until the next
    run marks it 137)."""
    last = read_last_run(directory)
    if last is None or last.get("exit_code") is not None or not last.get("run_id"):
        return last
    pid = last.get("pid")
    started = last.get("started_unix")
    alive = process_alive(
        int(pid) if isinstance(pid, int) else 0,
        str(last["host"]) if last.get("host") else None,
        float(started) if isinstance(started, int | float) else None,
    )
    last = {**last, "alive": alive}
    if alive is False:
        last.update(status="killed", exit_meaning=KILLED_MEANING)
    return last


def read_runs(directory: Path) -> list[dict[str, Any]]:
    """Every run of DIR (DIR/runs.jsonl), one row each (a run's latest line), oldest
    first; a torn last line (a crash mid-append) is skipped."""
    rows: dict[str, dict[str, Any]] = {}
    try:
        text = (directory / RUNS_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("run_id"):
            rows[str(row["run_id"])] = {c: row.get(c) for c in (*RUN_COLUMNS, "started_unix")}
    return sorted(rows.values(), key=lambda r: (r.get("started_unix") or 0.0, r["run_id"]))


def lock_state(directory: Path) -> dict[str, Any] | None:
    """Who holds DIR's run lock as the holder wrote it (`pid`, `host`, `started_at`,
    `command`) and whether that process is `alive` (None: another host); None when no
    holder file is there (no run holds it, or it ended cleanly)."""
    from arena.store import lock_holder

    holder = lock_holder(directory)
    if holder is None:
        return None
    pid, started = holder.get("pid"), holder.get("started_at")
    alive = process_alive(
        int(pid) if isinstance(pid, int) else 0,
        str(holder["host"]) if holder.get("host") else None,
        float(started) if isinstance(started, int | float) else None,
    )
    return {**holder, "alive": alive}


def read_ops_state(directory: Path) -> dict[str, Any]:
    """DIR/ops_state.json, or the state of a directory that never alerted."""
    try:
        data = json.loads((directory / OPS_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    state: dict[str, Any] = {
        "partial_streak": 0,
        "alerted": False,
        "alerted_exit": None,  # the exit code last alerted (one alert per change of state)
        "last_success_unix": None,
        "undelivered": [],  # alert records no channel took yet: sent again by the next run
    }
    if isinstance(data, dict):
        state.update({k: data[k] for k in state if k in data})
    return state


def last_success(directory: Path) -> float | None:
    """When DIR's last complete run (exit 0) ended: DIR/ops_state.json, else the newest
    such record among the report files; None when no run completed."""
    known = read_ops_state(directory).get("last_success_unix")
    if isinstance(known, int | float):
        return float(known)
    best: float | None = None
    for path in (directory / "reports").glob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("exit_code") != 0:
            continue
        record: dict[str, Any] = data["record"] if isinstance(data.get("record"), dict) else {}
        ended = record.get("ended_unix")
        if not isinstance(ended, int | float):
            ended = path.stat().st_mtime  # a report of an older arena: written at its end
        best = float(ended) if best is None else max(best, float(ended))
    return best
