"""Process exit codes (each `ArenaError` kind names its own: `arena.errors`).

Light: `arena --help` loads this, click and `arena.errors` (which imports nothing).
"""

from __future__ import annotations

import os
import sys
from enum import IntEnum
from typing import NoReturn

from arena.errors import ArenaError


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


def exit_for(exc: BaseException) -> Exit | None:
    """The exit code of an arena error, the one its kind carries (`ArenaError.exit_code`);
    None for any other exception (a bug, exit 1)."""
    return Exit(exc.exit_code) if isinstance(exc, ArenaError) else None


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a closed pipe or a stream cut mid-write
            pass


def exit_program(code: object) -> NoReturn:
    """End the process with `code` (as `sys.exit` reads it) once its output is flushed."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message")
        sys.stderr.write(f"{code}\n")
        status = 1
    _flush()
    os._exit(status)
