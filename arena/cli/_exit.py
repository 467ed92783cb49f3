"""Process exit codes (no imports: `arena --help` loads this and click only)."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Process exit codes, the same for every command (see README)."""

    OK = 0
    ERROR = 1
    BAD_INPUT = 2
    PARTIAL = 3
    BUDGET = 4
    STORAGE = 74  # the log cannot be written: disk full, read-only, no permission
    LOCKED = 75
    SIGINT = 130
    SIGTERM = 143
