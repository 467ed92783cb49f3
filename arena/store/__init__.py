"""The crash-safe, append-only Parquet run log and the run lock (see docs/DESIGN.md)."""

from arena.store._files import StorageError, storage_error
from arena.store._lock import LockHeld, RunLock, lock_holder
from arena.store._log import RunLog
from arena.store._reasons import failure_reason, failure_reasons, merge_reasons
from arena.store._rewrite import Rewritten, rewrite_tables
from arena.store._schema import TABLES, register_table
from arena.store._writer import LogWriter

__all__ = [
    "TABLES",
    "LockHeld",
    "LogWriter",
    "Rewritten",
    "RunLock",
    "RunLog",
    "StorageError",
    "failure_reason",
    "failure_reasons",
    "lock_holder",
    "merge_reasons",
    "register_table",
    "rewrite_tables",
    "storage_error",
]
