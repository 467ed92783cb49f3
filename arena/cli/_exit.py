"""Process exit codes, and the one map from arena's errors to them.

Light: `arena --help` loads this, click and `arena.errors` (which imports nothing).
"""

from __future__ import annotations

import os
import sys
from enum import IntEnum
from types import FrameType
from typing import Any, NoReturn

import click

from arena.errors import (
    ArenaConfigError,
    ArenaError,
    ArenaInputError,
    ArenaLockError,
    ArenaProviderError,
    ArenaStorageError,
)


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


# The exit code of each kind of error (arena.errors), the one place the CLI maps
# them; first match wins, so an error of two kinds (a log of a newer format is a
# storage error the user fixes like bad input) takes the first.
ERROR_EXITS: tuple[tuple[type[ArenaError], Exit], ...] = (
    (ArenaConfigError, Exit.BAD_INPUT),
    (ArenaInputError, Exit.BAD_INPUT),
    (ArenaProviderError, Exit.BAD_INPUT),
    (ArenaLockError, Exit.LOCKED),
    (ArenaStorageError, Exit.STORAGE),
    (ArenaError, Exit.ERROR),
)


def exit_for(exc: BaseException) -> Exit | None:
    """The exit code of an arena error (None for any other exception: a bug, exit 1)."""
    for kind, code in ERROR_EXITS:
        if isinstance(exc, kind):
            return code
    return None


class Command(click.Command):
    """An arena command: an `ArenaError` it does not handle ends it with its kind's exit
    code and message (`ERROR_EXITS`), also when it is invoked on its own (tests, scripts)
    rather than through `arena`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ArenaError as exc:
            from arena.cli._common import error_exit  # loads the config and the store

            error_exit(exc, bool(ctx.params.get("as_json")))


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


def exit_now_interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT handler while no command code runs (the CLI loading, or exiting after a
    command ended): exit 130 at once, never a traceback or a death by the signal.

    What was printed is flushed first; nothing else is pending then (a command's
    files are written and closed before it ends).
    """
    _flush()
    try:
        os.write(2, b"arena: interrupted\n")
    except OSError:
        pass
    os._exit(int(Exit.SIGINT))
