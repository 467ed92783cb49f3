"""The run lock: one run per directory at a time."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

import filelock

__all__ = ["LockHeld", "RunLock"]

LOCK_NAME = ".arena.lock"


class LockHeld(Exception):
    """Another run holds the lock of this run directory."""

    def __init__(self, directory: Path) -> None:
        super().__init__(f"another arena run is using {directory} (lock {directory / LOCK_NAME})")
        self.directory = directory


class RunLock:
    """Exclusive lock on `DIR/.arena.lock`; raises LockHeld at once if another run holds it.

    It is an OS lock (flock), so a holder killed with SIGKILL releases it.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._lock = filelock.FileLock(self.directory / LOCK_NAME, timeout=0)

    def acquire(self) -> None:
        """Take the lock or raise LockHeld."""
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise LockHeld(self.directory) from None

    def release(self) -> None:
        """Give the lock back."""
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
