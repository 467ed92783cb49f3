"""On-disk layout of the run log: naming, parsing, durable part writing, compaction.

Layout under `DIR/log/`:

- `<table>.journal.jsonl`: the live journal, one JSON object per line.
- `<table>.journal.<key>.sealed.jsonl`: a sealed journal waiting to be compacted.
- `<table>/part-<key>-<uuid>.parquet`: the compacted rows of the sealed journal
  with the same key.
- `<table>/manifest.json`: the names of every part written (replaced
  atomically after each part), so a part deleted since is detected.
- `quarantine/<table>/<part>`: parts whose Parquet data could not be decoded,
  moved aside (by a process that writes the log: `arena run`, `arena gc`) with
  a warning; their calls are pending again. A read-only reader skips such a
  part with a warning and leaves it in place.

Rows flow live journal -> sealed journal (rename) -> part (copy, then the sealed
journal is deleted). Parts are never deleted or rewritten. A key is a 20-digit
nanosecond timestamp given when a journal is sealed, strictly greater than every
key already on disk, so key order is write order, and a part sorts exactly where
the journal it came from did. A part keeps every row of its journal, rows that
a later row of the same id superseded included (they still cost money).
Everything here is synchronous; the writer runs it in worker threads.
"""

from __future__ import annotations

import errno
import io
import json
import logging
import os
import re
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arena.errors import ArenaStorageError
from arena.store._schema import empty_frame, normalize_row, polars_schema, table_schema

_SEALED = re.compile(r"^(?P<table>[a-z][a-z0-9_]*)\.journal\.(?P<key>\d+)\.sealed\.jsonl$")
_PART = re.compile(r"^part-(?P<key>\d{20})-[0-9a-f]{32}\.parquet$")
_TMP_PREFIX = ".tmp-"
MANIFEST = "manifest.json"
QUARANTINE = "quarantine"

log = logging.getLogger("arena.store")

# Parts already warned about in this process (missing or skipped as damaged),
# and damaged parts already moved to quarantine.
_WARNED: set[Path] = set()
_MOVED: set[Path] = set()


class StorageError(ArenaStorageError):
    """The log could not be written: disk full, read-only file system, no permission."""

    def __init__(self, path: Path | str, cause: OSError) -> None:
        reason = os.strerror(cause.errno) if cause.errno else str(cause)
        super().__init__(f"cannot write {path}: {reason}")
        self.path = Path(path)
        self.reason = reason
        self.errno = cause.errno


# OSError numbers that mean "this storage cannot take more writes".
STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.EFBIG, errno.EIO}
)


def storage_error(exc: BaseException, default_path: Path | str) -> StorageError | None:
    """The StorageError an exception (or its cause) stands for, or None for other errors."""
    seen: set[int] = set()
    inner: BaseException | None = exc
    while inner is not None and id(inner) not in seen:
        seen.add(id(inner))
        if isinstance(inner, StorageError):
            return inner
        if isinstance(inner, OSError) and inner.errno in STORAGE_ERRNOS:
            return StorageError(inner.filename or default_path, inner)
        inner = inner.__cause__ or inner.__context__
    return None


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


class PartialWrite(OSError):
    """A write that failed after `written` bytes of it reached the file (a disk that filled)."""

    def __init__(self, cause: OSError, written: int) -> None:
        super().__init__(cause.errno, cause.strerror, cause.filename)
        self.written = written


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written; a failure raises PartialWrite (bytes written)."""
    view = memoryview(data)
    done = 0
    while view:
        try:
            written = os.write(fd, view)
        except OSError as exc:
            raise PartialWrite(exc, done) from exc
        done += written
        view = view[written:]


def parse_journal(table: str, data: bytes, path: Path | None = None) -> pl.DataFrame:
    """Rows of journal bytes; anything after the last newline (a torn write) is skipped.
    `path`: the journal's file, named in warnings."""
    end = data.rfind(b"\n")
    if end < 0:
        return empty_frame(table)
    body = data[: end + 1]
    try:
        frame = pl.read_ndjson(io.BytesIO(body), schema=polars_schema(table))
    except Exception:  # polars raises several kinds; the slow path sorts it out
        return _parse_lines(table, body, path)
    return frame.filter(pl.col("id").is_not_null())


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A journal row with every lone surrogate in its strings replaced by U+FFFD (a
    surrogate pair decodes to one character, so what is left is unpaired); 1 when one
    was replaced, else 0."""
    found = False

    def clean(value: Any) -> Any:
        nonlocal found
        if isinstance(value, str) and _SURROGATE.search(value):
            found = True
            return _SURROGATE.sub("\ufffd", value)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    out = {k: clean(v) for k, v in obj.items()}
    return out, int(found)


def _parse_lines(table: str, body: bytes, path: Path | None = None) -> pl.DataFrame:
    """Line-by-line parse that skips (and warns about) lines that are not valid rows."""
    schema = table_schema(table)
    names = set(schema.names)
    rows: list[dict[str, object]] = []
    skipped = repaired = 0
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
            if _SURROGATE_ESCAPE.search(line):  # "\ud800" unpaired: no UTF-8 can hold it
                obj, fixed = _without_surrogates(obj)
                repaired += fixed
            rows.append(normalize_row(table, {k: v for k, v in obj.items() if k in names}))
        except ValueError:
            skipped += 1
    if skipped:
        warnings.warn(
            f"table {table!r}: skipped {skipped} unreadable journal line(s)",
            RuntimeWarning,
            stacklevel=3,
        )
    if repaired:
        where = f"{path}" if path is not None else f"table {table!r}"
        warnings.warn(
            f"{where}: {repaired} journal line(s) held a lone surrogate (an escape such as "
            "\\ud800 with no pair), not valid Unicode: read as U+FFFD; `arena gc` writes "
            "the rows so into the log's Parquet parts",
            RuntimeWarning,
            stacklevel=3,
        )
    if not rows:
        return empty_frame(table)
    import pyarrow as pa  # journals are read only after a crash or during a run

    frame = pl.from_arrow(pa.Table.from_pylist(rows, schema=schema.arrow()))
    assert isinstance(frame, pl.DataFrame)
    return conform(frame, table)


def read_journal(table: str, path: Path) -> pl.DataFrame:
    """Rows of one journal file (raises FileNotFoundError if it vanished)."""
    with open(path, "rb") as f:
        return parse_journal(table, f.read(), path)


def read_parts(
    table: str, paths: list[Path], columns: list[str] | None = None, *, repair: bool = False
) -> pl.DataFrame:
    """Rows of Parquet parts in the given order, conformed to the table's current schema.

    `columns` (None: every column) are the only ones read from the files. A
    part whose data cannot be decoded is skipped with a warning, and with
    `repair` moved to quarantine (see `quarantine_part`). Any other error
    (no permission, too many open files, a bug) is raised: a healthy part is
    never moved or skipped.
    """
    if not paths:
        return conform(empty_frame(table), table, columns)
    # One chunk per column: the parts come as one chunk each, and joins, sorts and
    # gathers over a million rows in hundreds of chunks take several times longer.
    frame: pl.DataFrame | None
    try:  # one parallel read
        frame = pl.read_parquet(paths, columns=columns)
    except _SCHEMA_ERRORS:  # parts of an older format, without a newer column
        frame = _read_older(table, paths, columns)
    except Exception:
        frame = None
    if frame is None:  # other types, a damaged part, an I/O error: one at a time
        frames = [read_part(table, p, columns, repair=repair) for p in paths]
        kept = [f for f in frames if f is not None]
        if not kept:
            return conform(empty_frame(table), table, columns)
        return pl.concat(kept, rechunk=True)
    return conform(frame, table, columns).rechunk()


# What polars raises when the parts of one read do not share their columns.
_SCHEMA_ERRORS = (pl.exceptions.ColumnNotFoundError, pl.exceptions.SchemaError)


def _read_older(table: str, paths: list[Path], columns: list[str] | None) -> pl.DataFrame | None:
    """Parts that lack some of the table's columns, in one read: those read as null
    (None when that read fails too; the parts are then read one at a time)."""
    try:
        scan = pl.scan_parquet(
            paths, schema=polars_schema(table), missing_columns="insert", extra_columns="ignore"
        )
        return (scan if columns is None else scan.select(columns)).collect()
    except Exception:
        return None


def read_part(
    table: str, path: Path, columns: list[str] | None = None, *, repair: bool = False
) -> pl.DataFrame | None:
    """One part's rows; None when its data cannot be decoded (moved aside with `repair`)."""
    try:
        if columns is None:
            frame = pl.read_parquet(path)
        else:  # only the wanted columns it has (conform adds the others)
            present = pl.read_parquet_schema(path)
            frame = pl.read_parquet(path, columns=[c for c in columns if c in present])
    except FileNotFoundError:
        return None  # quarantined by another reader meanwhile
    except Exception as exc:
        if not is_damaged(exc):
            raise
        if repair:
            quarantine_part(path, exc)
        else:
            _skip_part(path, exc)
        return None
    return conform(frame, table, columns)


def is_damaged(exc: BaseException) -> bool:
    """Whether an error reading a Parquet file says its bytes are not valid Parquet.

    polars reports truncated, garbled and empty files as ComputeError ("File
    out of specification"); I/O errors (no permission, too many open files)
    come as OSError and are not damage.
    """
    panic = getattr(pl.exceptions, "PanicException", ())
    # pyarrow's own error, where pyarrow is loaded (a reader that never loads it sees none)
    arrow = sys.modules.get("pyarrow")
    invalid = (arrow.ArrowInvalid,) if arrow is not None else ()
    return isinstance(exc, (pl.exceptions.ComputeError, *invalid)) or (
        bool(panic) and isinstance(exc, panic)
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"


def _skip_part(path: Path, exc: BaseException) -> None:
    """Warn (once) that a damaged part is skipped and left where it is."""
    if path not in _WARNED:
        _WARNED.add(path)
        log.warning(
            "damaged log part %s (%s) skipped; `arena run` moves it to %s and runs its calls again",
            path,
            _describe(exc),
            path.parent.parent / QUARANTINE / path.parent.name,
        )


def quarantine_part(path: Path, exc: BaseException) -> None:
    """Move a damaged part to `log/quarantine/<table>/`, warning once and naming it.

    Its rows are then missing from the log, so their calls are pending and the
    next run makes them again. A log that cannot be changed (read-only) keeps
    the part where it is; it is skipped all the same.
    """
    table_dir = path.parent
    target_dir = table_dir.parent / QUARANTINE / table_dir.name
    target = target_dir / path.name
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        fsync_dir(table_dir)
        where = f"moved to {target}"
    except FileNotFoundError:
        return
    except OSError as move_error:
        where = f"left in place ({move_error.strerror or move_error}), skipped"
    if path not in _MOVED:
        _MOVED.add(path)
        log.warning(
            "damaged log part %s (%s) %s; its calls will run again", path, _describe(exc), where
        )


def read_manifest(log_dir: Path, table: str) -> set[str] | None:
    """Names of the parts a table's manifest lists (None when it has none)."""
    try:
        with open(parts_dir(log_dir, table) / MANIFEST, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # a manifest is replaced atomically; an unreadable one is ignored
    parts = data.get("parts") if isinstance(data, dict) else None
    return {str(p) for p in parts} if isinstance(parts, list) else None


def missing_parts(log_dir: Path, table: str) -> list[str]:
    """Parts the manifest lists that are neither on disk nor quarantined (deleted)."""
    listed = read_manifest(log_dir, table)  # before listing: a new part is listed after
    if not listed:
        return []
    present = {path.name for _, path in list_parts(log_dir, table)}
    try:
        present |= set(os.listdir(log_dir / QUARANTINE / table))
    except FileNotFoundError:
        pass
    gone = sorted(listed - present)
    for name in gone:
        path = parts_dir(log_dir, table) / name
        if path not in _WARNED:
            _WARNED.add(path)
            log.warning(
                "log part %s was deleted (it is in %s but not on disk): its rows are "
                "lost and their calls will run again",
                path,
                parts_dir(log_dir, table) / MANIFEST,
            )
    return gone


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
    return drop_repeats(merged, "id")


# An id as the plan makes them: a letter, `-` and 24 lowercase hex digits (12 bytes).
DIGEST_ID = r"^[a-z]-[0-9a-f]{24}$"


def digest_key(ids: pl.Expr) -> pl.Expr:
    """The 24 hex digits of ids as the plan makes them as one 96-bit integer (Int128):
    ids of one letter compare as their texts do, and sort, hash and join as numbers."""
    return _key_of(*digest_halves(ids))


def _key_of(high: pl.Expr, low: pl.Expr) -> pl.Expr:
    """The 96-bit key (Int128) of its first 64 and last 32 bits."""
    return high.cast(pl.Int128) * (1 << 32) + low.cast(pl.Int128)


def _split(keys: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The first 64 bits (uint64) and last 32 bits (uint32) of `digest_keys`."""
    frame = keys.to_frame("id")
    high = frame.select((pl.col("id") // (1 << 32)).cast(pl.UInt64)).to_series().to_numpy()
    low = frame.select((pl.col("id") % (1 << 32)).cast(pl.UInt32)).to_series().to_numpy()
    return high, low


def digest_keys(ids: pl.Series) -> pl.Series | None:
    """`digest_key` of a column of ids (nulls stay null), or None when a value is not
    an id as the plan makes them or the ids do not all have the same letter."""
    if ids.dtype != pl.String:
        return None
    present = ids.drop_nulls()
    if present.len() and not (
        present.str.contains(DIGEST_ID).all() and present.str.starts_with(present[0][:2]).all()
    ):
        return None
    return pl.select(digest_key(pl.lit(ids))).to_series().alias(ids.name)


def digest_order(keys: pl.Series, *, latest: bool = False) -> np.ndarray:
    """The order that sorts a column of `digest_keys` (without nulls): by their 96 bits,
    rows of equal keys in the order they came (NumPy's `lexsort` of the two halves).
    `latest`: of rows with equal keys only the last is in the order (the latest
    row of an id, as `drop_repeats` keeps it), found on the sorted keys.

    Each row's first 64 bits are packed with its position in the low bits and those
    numbers are sorted as they are (a plain sort of 8-byte numbers is much quicker
    than an argsort, which moves an index beside every key); the few runs
    whose kept high bits are equal are then put in order by all 96 bits, read for
    those rows only."""
    high = keys.to_frame("id").select((pl.col("id") // (1 << 32)).cast(pl.UInt64))
    packed = high.to_series().to_numpy()
    del high
    if not packed.flags.writeable:
        packed = packed.copy()
    return _packed_order(packed, lambda rows: _split(keys.gather(pl.Series(rows))), latest)


def halves_order(
    high: np.ndarray, low: np.ndarray, *, latest: bool = False, consume: bool = False
) -> np.ndarray:
    """`digest_order` of keys given as their first 64 bits (uint64) and last 32 bits
    (uint32), which stay as they are (a uint64 copy of `high` is sorted).

    `consume`: `high` itself is sorted (it is left overwritten), and only the bits of
    it that the packing drops are kept aside (4 bytes a row instead of a copy of 8):
    rows whose kept bits are equal are put in order by those and `low`.
    """
    if not consume:
        return _packed_order(high.copy(), lambda rows: (high[rows], low[rows]), latest)
    shift = _position_bits(high.size)
    mask = np.uint64((1 << shift) - 1)
    dropped = np.empty(high.size, dtype=np.uint32 if shift <= 32 else np.uint64)
    for start in range(0, high.size, _ORDER_SLICE):
        np.bitwise_and(
            high[start : start + _ORDER_SLICE],
            mask,
            out=dropped[start : start + _ORDER_SLICE],
            casting="unsafe",
        )
    return _packed_order(high, lambda rows: (dropped[rows], low[rows]), latest)


def _position_bits(n: int) -> int:
    """Bits `_packed_order` packs a row's position in (the low bits of its key's first 64)."""
    return max(1, (n - 1).bit_length())


def _packed_order(
    packed: np.ndarray,
    halves: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    latest: bool,
) -> np.ndarray:
    """The order of keys whose first 64 bits are `packed` (overwritten); `halves(rows)`:
    the first 64 and last 32 bits of the keys of `rows` (or any bits that, with the
    first 64's kept high bits, tell the keys apart in the same order)."""
    n = packed.size
    shift = np.uint64(_position_bits(n))
    # The packed numbers are made in place, the positions added a slice at a time:
    # 8 bytes a row, and the order 4 (an index below 2**32), at most.
    packed >>= shift
    packed <<= shift
    for start in range(0, n, _ORDER_SLICE):
        end = min(n, start + _ORDER_SLICE)
        packed[start:end] |= np.arange(start, end, dtype=np.uint64)
    packed.sort()
    order = np.empty(n, dtype=np.uint32 if n <= 1 << 32 else np.intp)
    np.bitwise_and(packed, np.uint64((1 << int(shift)) - 1), out=order, casting="unsafe")
    packed >>= shift  # the kept high bits, in order: runs of equal ones need the full key
    same = np.flatnonzero(packed[1:] == packed[:-1])
    del packed
    if not same.size:
        return order
    breaks = np.diff(same) > 1
    starts = same[np.r_[True, breaks]]
    ends = same[np.r_[breaks, True]] + 2
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        rows = order[start:end]
        high_bits, low_bits = halves(rows)
        order[start:end] = rows[np.lexsort((rows, low_bits, high_bits))]
    if latest:  # a key equal to the next one's is an earlier row of the same id
        first, second = halves(order[same]), halves(order[same + 1])
        repeated = same[(first[0] == second[0]) & (first[1] == second[1])]
        if repeated.size:
            order = np.delete(order, repeated)
    return order


def digest_halves(ids: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """The first 64 bits (UInt64) and last 32 bits (UInt32) of `digest_key(ids)`, from
    the texts: the key in 12 bytes, and what `halves_order` sorts on."""
    high = ids.str.slice(2, 16).str.to_integer(base=16, dtype=pl.UInt64, strict=False)
    low = ids.str.slice(18, 8).str.to_integer(base=16, dtype=pl.UInt32, strict=False)
    return high, low


def keys_of_halves(high: np.ndarray, low: np.ndarray, order: np.ndarray) -> pl.Series:
    """The `digest_keys` (Int128) of the halves' rows `order`, made a slice at a time."""
    chunks = [pl.Series("id", [], dtype=pl.Int128)]
    for start in range(0, order.size, _ORDER_SLICE):
        rows = order[start : start + _ORDER_SLICE]
        part = pl.DataFrame({"h": high[rows], "l": low[rows]})
        chunks.append(part.select(_key_of(pl.col("h"), pl.col("l")).alias("id")).to_series())
    return pl.concat(chunks, rechunk=False)


# Positions are added to the packed keys this many rows at a time (digest_order).
_ORDER_SLICE = 1 << 16


# A 64-bit mixing function (splitmix64's finaliser) and two keys for the fingerprints.
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
_SALTS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD6E8FEB86659FD93))
FINGERPRINT_ROWS = 1 << 16


def _mixed(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> np.uint64(30))) * _MIX[0]
    x = (x ^ (x >> np.uint64(27))) * _MIX[1]
    out: np.ndarray = x ^ (x >> np.uint64(31))
    return out


def digest_fingerprint(keys: pl.Series) -> tuple[int, int, int]:
    """How many `digest_keys` a column holds (no nulls) and two 64-bit sums of their
    mixed bits: two columns of distinct keys whose fingerprints are equal hold the same
    keys (unless 128 bits of hashes collide by chance, about one in 2**128), in any
    order. The plan file keeps its ids' fingerprint, so that a log holding exactly the
    plan's ids is found so without reading them. Summed FINGERPRINT_ROWS keys at a
    time: a few small arrays whatever the size of the column."""
    sums = [np.uint64(0), np.uint64(0)]
    for start in range(0, keys.len(), FINGERPRINT_ROWS):
        add_prints(sums, *_split(keys.slice(start, FINGERPRINT_ROWS)))
    return keys.len(), int(sums[0]), int(sums[1])


def halves_fingerprint(high: np.ndarray, low: np.ndarray, rows: np.ndarray) -> tuple[int, int, int]:
    """`digest_fingerprint` of the keys of `rows` given as their halves (`digest_halves`:
    the first 64 bits, uint64, and the last 32, uint32), without making the keys."""
    sums = [np.uint64(0), np.uint64(0)]
    for start in range(0, rows.size, FINGERPRINT_ROWS):
        some = rows[start : start + FINGERPRINT_ROWS]
        add_prints(sums, high[some], low[some])
    return int(rows.size), int(sums[0]), int(sums[1])


def add_prints(sums: list[np.uint64], high_bits: np.ndarray, low: np.ndarray) -> None:
    """Add the two mixed sums of `digest_fingerprint` of some keys, given as their halves
    (`digest_halves`), to `sums` (modulo 2**64)."""
    low_bits = low.astype(np.uint64)
    with np.errstate(over="ignore"):
        for k, salt in enumerate(_SALTS):
            mixed = _mixed(high_bits ^ _mixed(low_bits ^ salt))
            sums[k] += mixed.sum(dtype=np.uint64)


def digest_keys_of(ids: pl.Series) -> pl.Series:
    """`digest_keys` of the ids that are digests (others are left out): what a column of
    `digest_keys` is compared with."""
    kept = ids.drop_nulls().cast(pl.String)
    return pl.select(digest_key(pl.lit(kept.filter(kept.str.contains(DIGEST_ID))))).to_series()


def drop_repeats(frame: pl.DataFrame, subset: str | None = None) -> pl.DataFrame:
    """The frame without repeats of `subset` (None: of whole rows), the last kept, in order.

    Repeats are rare (an id written again, a row in both a journal and its part).
    Equal values have equal 64-bit hashes, so when no hash repeats there is
    nothing to drop, and the exact (and, for a million rows, far slower and more
    memory-hungry) deduplication is skipped.
    """
    hashes = (frame.hash_rows() if subset is None else frame[subset].hash()).to_numpy()
    ordered = np.sort(hashes)  # a repeat is two equal neighbours (a few times quicker
    if not (ordered[1:] == ordered[:-1]).any():  # than polars' is_duplicated)
        return frame
    return frame.unique(subset=subset, keep="last", maintain_order=True)


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
        import pyarrow.parquet as pq  # only a writer needs it: readers go through polars

        arrow = frame.to_arrow().cast(table_schema(table).arrow())
        with open(tmp, "wb") as f:
            pq.write_table(arrow, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, folder / name)
        fsync_dir(folder)
        self.update_manifest(table)
        return folder / name

    def update_manifest(self, table: str, *, forget: bool = False) -> None:
        """Rewrite a table's manifest atomically: every part listed before, and on disk.

        `forget`: list only the parts on disk now (after parts were removed on
        purpose, as `arena gc` does), so they are not reported as deleted.
        """
        folder = parts_dir(self.log_dir, table)
        with self._lock:
            names = set() if forget else set(read_manifest(self.log_dir, table) or ())
            names |= {path.name for _, path in list_parts(self.log_dir, table)}
            tmp = folder / f"{_TMP_PREFIX}{MANIFEST}"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"parts": sorted(names)}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, folder / MANIFEST)
            fsync_dir(folder)

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
            if list_parts(self.log_dir, table):
                self.update_manifest(table)  # a crash between a part and its manifest
        live = journal_path(self.log_dir, table)
        if live.exists():
            if live.stat().st_size == 0:
                live.unlink()
                fsync_dir(self.log_dir)
            else:
                self.seal(table)
        for _, path in list_sealed(self.log_dir, table):
            self.compact(table, path)
