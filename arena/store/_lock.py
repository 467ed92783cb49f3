"""The run lock: one run per directory at a time.

The holder writes who it is (pid, host, start time, command) to
`DIR/.arena.lock.json` once it has the lock, so that a run refused with
exit 75 can name it; the lock itself is the OS lock on `DIR/.arena.lock`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import filelock

from arena.errors import ArenaLockError

__all__ = ["HOLDER_NAME", "LockHeld", "RunLock", "lock_holder"]

LOCK_NAME = ".arena.lock"
HOLDER_NAME = ".arena.lock.json"


def lock_holder(directory: Path) -> dict[str, Any] | None:
    """Who holds DIR's lock as the holder wrote it (pid, host, started_at, command), or None."""
    try:
        data = json.loads((directory / HOLDER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _describe(holder: dict[str, Any] | None) -> str:
    if holder is None:
        return "holder unknown"
    started = holder.get("started_at")
    when = (
        time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started))
        if isinstance(started, int | float)
        else "an unknown time"
    )
    return f"pid {holder.get('pid')} on host {holder.get('host')}, since {when}"


class LockHeld(ArenaLockError):
    """Another run holds the lock of this run directory; `holder` says who, when known."""

    def __init__(self, directory: Path, holder: dict[str, Any] | None = None) -> None:
        super().__init__(
            f"another arena run is using {directory} ({_describe(holder)}; "
            f"lock {directory / LOCK_NAME})"
        )
        self.directory = directory
        self.holder = holder


class RunLock:
    """Exclusive lock on `DIR/.arena.lock`; raises LockHeld at once if another run holds it.

    It is an OS lock (flock), so a holder killed with SIGKILL releases it.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._lock = filelock.FileLock(self.directory / LOCK_NAME, timeout=0)

    def acquire(self) -> None:
        """Take the lock or raise LockHeld (naming the holder)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise LockHeld(self.directory, lock_holder(self.directory)) from None
        self._write_holder()

    def _write_holder(self) -> None:
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started_at": time.time(),
            "command": " ".join(sys.argv[1:2]),  # e.g. "run" (never the arguments)
        }
        path = self.directory / HOLDER_NAME
        tmp = self.directory / f".{HOLDER_NAME}.{os.getpid()}.tmp"
        try:
            tmp.write_text(json.dumps(holder), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:  # diagnostics only: a read-only directory still runs (and fails later)
            tmp.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the lock back."""
        if self._lock.is_locked:
            try:
                (self.directory / HOLDER_NAME).unlink(missing_ok=True)
            except OSError:
                pass
        self._lock.release()

    @property
    def is_locked(self) -> bool:
        """Whether this object holds the lock."""
        return self._lock.is_locked

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
