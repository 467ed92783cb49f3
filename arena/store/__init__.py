"""The crash-safe, append-only Parquet run log and the run lock (see docs/DESIGN.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes
from arena.store._files import (
    DIGEST_ID,
    StorageError,
    digest_fingerprint,
    digest_key,
    digest_keys,
    digest_keys_of,
    digest_order,
    storage_error,
)
from arena.store._format import LOG_FORMAT, LOG_MANIFEST, LogFormatError
from arena.store._log import RunLog, part_rows
from arena.store._reasons import failure_reason, failure_reasons, merge_reasons
from arena.store._schema import (
    TABLES,
    USAGE_DETAIL_COLUMNS,
    Column,
    TableSchema,
    register_table,
    usage_columns,
)
from arena.store._usage import TOKEN_COLUMNS, describe_tokens, token_totals

if TYPE_CHECKING:
    from arena.store._lock import LockHeld, RunLock, lock_holder
    from arena.store._rewrite import Rewritten, rewrite_tables
    from arena.store._writer import LogWriter

# The writer, the lock and the rewrite (asyncio, file locks) load on first use:
# a command that only reads the log (leaderboard, status) loads none of them.
_LAZY: dict[str, str] = {
    "LockHeld": "arena.store._lock",
    "RunLock": "arena.store._lock",
    "lock_holder": "arena.store._lock",
    "Rewritten": "arena.store._rewrite",
    "rewrite_tables": "arena.store._rewrite",
    "LogWriter": "arena.store._writer",
}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "DIGEST_ID",
    "LOG_FORMAT",
    "LOG_MANIFEST",
    "TABLES",
    "TOKEN_COLUMNS",
    "USAGE_DETAIL_COLUMNS",
    "Column",
    "LockHeld",
    "LogFormatError",
    "LogWriter",
    "Rewritten",
    "RunLock",
    "RunLog",
    "StorageError",
    "TableSchema",
    "describe_tokens",
    "digest_key",
    "digest_keys",
    "digest_fingerprint",
    "digest_keys_of",
    "digest_order",
    "failure_reason",
    "failure_reasons",
    "lock_holder",
    "merge_reasons",
    "part_rows",
    "register_table",
    "rewrite_tables",
    "storage_error",
    "token_totals",
    "usage_columns",
]
