"""On-disk layout of the run log: naming, parsing, durable part writing, compaction.

Layout under `DIR/log/`:

- `<table>.journal.jsonl`: the live journal, one JSON object per line.
- `<table>.journal.<key>.sealed.jsonl`: a sealed journal waiting to be compacted.
- `<table>/part-<key>-<uuid>.parquet`: the compacted rows of the sealed journal
  with the same key.

Rows flow live journal -> sealed journal (rename) -> part (copy, then the sealed
journal is deleted). Parts are never deleted or rewritten. A key is a 20-digit
nanosecond timestamp given when a journal is sealed, strictly greater than every
key already on disk, so key order is write order, and a part sorts exactly where
the journal it came from did. Everything here is synchronous; the writer runs it
in worker threads.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time
import uuid
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from arena.store._schema import empty_frame, normalize_row, polars_schema, table_schema

_SEALED = re.compile(r"^(?P<table>[a-z][a-z0-9_]*)\.journal\.(?P<key>\d+)\.sealed\.jsonl$")
_PART = re.compile(r"^part-(?P<key>\d{20})-[0-9a-f]{32}\.parquet$")
_TMP_PREFIX = ".tmp-"


def journal_path(log_dir: Path, table: str) -> Path:
    """The live journal of a table."""
    return log_dir / f"{table}.journal.jsonl"


def sealed_path(log_dir: Path, table: str, key: int) -> Path:
    """The sealed journal of a table with key `key`."""
    return log_dir / f"{table}.journal.{key:020d}.sealed.jsonl"


def parts_dir(log_dir: Path, table: str) -> Path:
    """The folder holding a table's Parquet parts."""
    return log_dir / table


def list_sealed(log_dir: Path, table: str) -> list[tuple[int, Path]]:
    """A table's sealed journals with their keys, oldest first."""
    found: list[tuple[int, Path]] = []
    try:
        entries = os.listdir(log_dir)
    except FileNotFoundError:
        return []
    for name in entries:
        match = _SEALED.match(name)
        if match and match["table"] == table:
            found.append((int(match["key"]), log_dir / name))
    found.sort()
    return found


def list_parts(log_dir: Path, table: str) -> list[tuple[int, Path]]:
    """A table's Parquet parts with their keys, oldest first."""
    folder = parts_dir(log_dir, table)
    try:
        names = sorted(n for n in os.listdir(folder) if _PART.match(n))
    except FileNotFoundError:
        return []
    return [(int(n[5:25]), folder / n) for n in names]


def max_key(log_dir: Path, table: str) -> int:
    """The largest key of a table's sealed journals and parts (0 when none)."""
    keys = [key for key, _ in list_sealed(log_dir, table)]
    keys += [key for key, _ in list_parts(log_dir, table)]
    return max(keys, default=0)


def fsync_dir(path: Path) -> None:
    """Make renames, creations and deletions inside a folder durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def parse_journal(table: str, data: bytes) -> pl.DataFrame:
    """Rows of journal bytes; anything after the last newline (a torn write) is skipped."""
    end = data.rfind(b"\n")
    if end < 0:
        return empty_frame(table)
    body = data[: end + 1]
    try:
        frame = pl.read_ndjson(io.BytesIO(body), schema=polars_schema(table))
    except Exception:  # polars raises several kinds; the slow path sorts it out
        return _parse_lines(table, body)
    return frame.filter(pl.col("id").is_not_null())


def _parse_lines(table: str, body: bytes) -> pl.DataFrame:
    """Line-by-line parse that skips (and warns about) lines that are not valid rows."""
    schema = table_schema(table)
    names = set(schema.names)
    rows: list[dict[str, object]] = []
    skipped = 0
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
            rows.append(normalize_row(table, {k: v for k, v in obj.items() if k in names}))
        except ValueError:
            skipped += 1
    if skipped:
        warnings.warn(
            f"table {table!r}: skipped {skipped} unreadable journal line(s)",
            RuntimeWarning,
            stacklevel=3,
        )
    if not rows:
        return empty_frame(table)
    frame = pl.from_arrow(pa.Table.from_pylist(rows, schema=schema))
    assert isinstance(frame, pl.DataFrame)
    return conform(frame, table)


def read_journal(table: str, path: Path) -> pl.DataFrame:
    """Rows of one journal file (raises FileNotFoundError if it vanished)."""
    with open(path, "rb") as f:
        return parse_journal(table, f.read())


def read_parts(table: str, paths: list[Path], columns: list[str] | None = None) -> pl.DataFrame:
    """Rows of Parquet parts in the given order, conformed to the table's current schema.

    `columns` (None: every column) are the only ones read from the files.
    """
    if not paths:
        return conform(empty_frame(table), table, columns)
    try:  # one parallel read
        return conform(pl.read_parquet(paths, columns=columns), table, columns)
    except Exception:  # parts written under different schemas: one at a time
        return pl.concat([conform(pl.read_parquet(p), table, columns) for p in paths])


def conform(frame: pl.DataFrame, table: str, columns: list[str] | None = None) -> pl.DataFrame:
    """Give a frame exactly the table's columns (missing ones null), in order, with its types.

    With `columns`, only those (in that order).
    """
    schema = polars_schema(table)
    if columns is not None:
        schema = pl.Schema({name: schema[name] for name in columns})
    if frame.schema == schema:
        return frame
    return frame.select(
        [
            pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in schema.items()
        ]
    )


def latest_per_id(
    frames: list[pl.DataFrame], table: str, columns: list[str] | None = None
) -> pl.DataFrame:
    """Concatenate frames (oldest first) and keep the last row of each id."""
    frames = [f for f in frames if f.height]
    if not frames:
        return conform(empty_frame(table), table, columns)
    merged = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical", rechunk=True)
    # Most ids occur once. Equal ids have equal 64-bit hashes, so when no hash repeats there
    # is nothing to drop, and the exact (and, for a million rows, far more memory-hungry)
    # deduplication is skipped.
    if not merged["id"].hash().is_duplicated().any():
        return merged
    return merged.unique(subset="id", keep="last", maintain_order=True)


class Compactor:
    """Hands out keys and turns sealed journals into parts; safe to call from worker threads."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._lock = threading.Lock()
        self._last_key: dict[str, int] = {}

    def next_key(self, table: str) -> int:
        """A key later than every key on disk or handed out, even across clock steps."""
        with self._lock:
            last = self._last_key.get(table)
            if last is None:
                last = max_key(self.log_dir, table)
            key = max(time.time_ns(), last + 1)
            self._last_key[table] = key
        return key

    def seal(self, table: str) -> Path:
        """Rename the live journal to a new sealed journal (the caller closed it)."""
        target = sealed_path(self.log_dir, table, self.next_key(table))
        os.rename(journal_path(self.log_dir, table), target)
        fsync_dir(self.log_dir)
        return target

    def write_part(self, table: str, key: int, frame: pl.DataFrame) -> Path:
        """Write rows as the part of `key`: temp name, fsync, rename, fsync the folder."""
        folder = parts_dir(self.log_dir, table)
        if not folder.is_dir():
            folder.mkdir(exist_ok=True)
            fsync_dir(self.log_dir)
        name = f"part-{key:020d}-{uuid.uuid4().hex}.parquet"
        tmp = folder / f"{_TMP_PREFIX}{name}"
        arrow = frame.to_arrow().cast(table_schema(table))
        with open(tmp, "wb") as f:
            pq.write_table(arrow, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / name)
        fsync_dir(folder)
        return folder / name

    def compact(self, table: str, sealed: Path) -> None:
        """Move a sealed journal's rows into a part with its key, then delete the journal.

        A crash between the two steps leaves the same rows in both places, which
        reading tolerates.
        """
        match = _SEALED.match(sealed.name)
        if match is None:
            raise ValueError(f"not a sealed journal: {sealed}")
        try:
            frame = read_journal(table, sealed)
        except FileNotFoundError:
            return
        frame = frame.unique(subset="id", keep="last", maintain_order=True)
        if frame.height:
            self.write_part(table, int(match["key"]), frame)
        try:
            os.unlink(sealed)
        except FileNotFoundError:
            pass
        fsync_dir(self.log_dir)

    def recover(self, table: str) -> None:
        """Finish what a crashed writer left: compact its sealed journals and live journal.

        The live journal is sealed too, so a new writer never appends after a
        torn line.
        """
        folder = parts_dir(self.log_dir, table)
        if folder.is_dir():
            for name in os.listdir(folder):
                if name.startswith(_TMP_PREFIX):
                    os.unlink(folder / name)
        live = journal_path(self.log_dir, table)
        if live.exists():
            if live.stat().st_size == 0:
                live.unlink()
                fsync_dir(self.log_dir)
            else:
                self.seal(table)
        for _, path in list_sealed(self.log_dir, table):
            self.compact(table, path)
