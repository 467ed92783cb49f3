"""The log's format version: `DIR/log/manifest.json`, `{"format": N}`.

Format 1 is the layout of this package (journals, parts, each table's
`manifest.json`, the schemas of `_schema.py`). Within a format, a table may
gain a column (nullable): rows written before it read that column as null
(`_files.conform` reads every part and journal to the table's current schema),
and an arena that does not know the column reads the rest. Any other change to the
layout or to a column (a rename, a new type, a removal) takes a new format and
an upgrade step from the one before (`_UPGRADES`).

- A log of a newer format than `LOG_FORMAT` is refused before anything is read
  or written (`LogFormatError`: the CLI exits 2; use the newer arena).
- A log without the file (written before versions were recorded: "format 0")
  is read through `_from_unversioned`: its layout is format 1's, and a column
  a table gained since its rows were written is null in them. The first writer
  on it records format 1 (nothing else on disk changes); readers leave it as it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import polars as pl

from arena.errors import ArenaInputError, ArenaStorageError
from arena.store._files import fsync_dir

__all__ = ["LOG_FORMAT", "LOG_MANIFEST", "LogFormatError", "check_format", "record_format"]

LOG_FORMAT = 1
LOG_MANIFEST = "manifest.json"
_UNVERSIONED = 0


class LogFormatError(ArenaStorageError, ArenaInputError):
    """A run directory's log this arena cannot read: a newer format, or a manifest that
    is not one. A storage error the user fixes like bad input (exit 2): nothing is
    wrong with the disk."""

    def __init__(self, log_dir: Path, problem: str) -> None:
        super().__init__(f"{log_dir / LOG_MANIFEST}: {problem}")
        self.path = log_dir / LOG_MANIFEST
        self.problem = problem


def read_format(log_dir: Path) -> int:
    """The format a log records (0: none recorded, a log written before versions)."""
    path = log_dir / LOG_MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _UNVERSIONED
    except IsADirectoryError:
        raise LogFormatError(
            log_dir,
            "a directory where the log's format file belongs: remove it "
            f"(`rm -r {path}`); the next run writes the file again",
        ) from None
    except OSError as exc:
        raise LogFormatError(log_dir, f"cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise LogFormatError(log_dir, "not UTF-8 text, so not a log manifest") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise LogFormatError(log_dir, "not JSON, so not a log manifest") from None
    found = data.get("format") if isinstance(data, dict) else None
    if not isinstance(found, int) or isinstance(found, bool) or found < 1:
        raise LogFormatError(log_dir, 'no format version (expected {"format": N}, N >= 1)')
    return found


def check_format(log_dir: Path) -> int:
    """The log's format; `LogFormatError` when it is newer than this arena reads."""
    found = read_format(log_dir)
    if found > LOG_FORMAT:
        raise LogFormatError(
            log_dir,
            f"the log was written in format {found}, by a newer arena; this one reads "
            f"formats up to {LOG_FORMAT}: run a newer arena on this directory",
        )
    return found


def record_format(log_dir: Path) -> None:
    """Record `LOG_FORMAT` (a writer, before its first row); an older log is upgraded
    first (format 0: nothing to rewrite). Atomic: temporary file, fsync, rename."""
    found = check_format(log_dir)
    if found == LOG_FORMAT:
        return
    tmp = log_dir / f".tmp-{LOG_MANIFEST}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"format": LOG_FORMAT}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, log_dir / LOG_MANIFEST)
    fsync_dir(log_dir)


def _from_unversioned(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """Format 0 -> 1: the layout is the same, so the rows are too. A column the table
    gained since they were written is null in them by format 1's own rule (the parts
    and journals are read to the table's current schema: `_files.conform`)."""
    return frame


# format k -> the step that reads its rows as format k + 1
_UPGRADES: dict[int, Callable[[pl.DataFrame, str], pl.DataFrame]] = {
    _UNVERSIONED: _from_unversioned,
}


def upgrade(frame: pl.DataFrame, table: str, found: int) -> pl.DataFrame:
    """Rows of a log of format `found`, as `LOG_FORMAT` has them."""
    for step in range(found, LOG_FORMAT):
        frame = _UPGRADES[step](frame, table)
    return frame
