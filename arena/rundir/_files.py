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
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = [
    "LAST_RUN",
    "OPS_STATE",
    "iso_time",
    "last_success",
    "read_last_run",
    "read_ops_state",
    "write_json_atomic",
]

LAST_RUN = "last_run.json"
OPS_STATE = "ops_state.json"


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


def read_ops_state(directory: Path) -> dict[str, Any]:
    """DIR/ops_state.json, or the state of a directory that never alerted."""
    try:
        data = json.loads((directory / OPS_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    state: dict[str, Any] = {"partial_streak": 0, "alerted": False, "last_success_unix": None}
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
