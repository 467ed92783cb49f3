"""The canonical order of a run's reviews: by id, found without sorting a million strings.

Ranking reads the reviews in id order, so that the seeded Elo orders and
bootstrap draws do not depend on the order the log holds them in. A sort of
a million ids as text is slow (a Parquet log's ids share a prefix, so most
comparisons go past the few bytes a string view keeps inline), while the
same order comes from sorting their bytes as numbers: each id's first
`8 k` bytes (zero-padded) as `k` big-endian unsigned integers, then its
length. Two ids compare as those tuples do: the first differing integer
holds the first differing byte, and an id that is another's prefix (equal
integers, the rest zero) is shorter and comes first.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numpy.typing import NDArray

__all__ = ["sort_by_id", "text_order"]

# Longer ids than this are sorted as text (no log writes them; a reviews file may).
_MAX_BYTES = 64
# Rows padded at a time (bounds the index arrays of ids of different lengths).
_CHUNK = 1 << 16
# Below this many rows, the text sort is as quick.
_MIN_ROWS = 10_000


def _padded_bytes(column: pl.Series) -> tuple[NDArray[np.uint8], NDArray[np.int64]] | None:
    """Each value's bytes, zero-padded to a multiple of 8 (rows, width), and its length;
    None when the column has nulls or a value over _MAX_BYTES bytes."""
    if column.null_count():
        return None
    import pyarrow as pa  # only for a column of _MIN_ROWS or more: a small leaderboard needs none

    array = column.to_arrow(compat_level=pl.CompatLevel.oldest())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_string(array.type) or pa.types.is_binary(array.type):
        offset_type: type[np.integer] = np.int32
    elif pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        offset_type = np.int64
    else:
        return None
    _, offsets_buffer, data_buffer = array.buffers()
    n = len(array)
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[array.offset : array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else None
    length = np.diff(offsets)
    longest = int(length.max()) if n else 0
    if longest > _MAX_BYTES or data is None:
        return None
    width = max(8, -(-longest // 8) * 8)
    out = np.zeros((n, width), dtype=np.uint8)
    if n and (length == longest).all():  # one length (a log's ids): the bytes as they lie
        first = int(offsets[0])
        out[:, :longest] = data[first : first + n * longest].reshape(n, longest)
        return out, length
    position = np.arange(longest, dtype=np.int64)
    for start in range(0, n, _CHUNK):
        rows = slice(start, min(start + _CHUNK, n))
        inside = position[None, :] < length[rows, None]
        where = np.where(inside, offsets[rows][:, None] + position[None, :], 0)
        out[rows, :longest] = np.where(inside, data[where], 0)
    return out, length


def text_order(column: pl.Series) -> NDArray[np.int64] | None:
    """The stable order that sorts a text column (`column.arg_sort()`), or None when the
    column has nulls, is not text, or has a value over 64 bytes."""
    if column.dtype not in (pl.String, pl.Binary):
        return None
    found = _padded_bytes(column)
    if found is None:
        return None
    padded, length = found
    words = padded.view(">u8").astype(np.uint64)  # (rows, width / 8), native order
    keys: list[NDArray[np.uint64] | NDArray[np.int64]] = [
        words[:, k] for k in range(words.shape[1])
    ]
    if length.size and (length != length[0]).any():
        keys.append(length)
    while len(keys) > 1 and (keys[0] == keys[0][0]).all():  # a prefix every value shares
        keys.pop(0)
    # Sort on the first key; rows that tie on it are then sorted on all of them (a
    # log's ids differ in their first 8 bytes but for a few per cent of the rows).
    order: NDArray[np.int64] = np.argsort(keys[0], kind="stable").astype(np.int64, copy=False)
    if len(keys) > 1 and order.size > 1:
        first = keys[0][order]
        same = first[1:] == first[:-1]
        tied = np.zeros(order.size, dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
        where = np.flatnonzero(tied)
        if where.size:
            rows = order[where]
            # lexsort is stable and takes its primary key last; the tied rows come in
            # row order within each run of the first key, as ties must stay.
            order[where] = rows[np.lexsort([key[rows] for key in reversed(keys)])]
    return order


def sort_by_id(frame: pl.DataFrame, *, nulls_last: bool = False) -> pl.DataFrame:
    """`frame.sort("id", maintain_order=True, nulls_last=...)`, the same rows in the same
    order; a frame whose `id` column is already sorted comes back as it is."""
    if "id" not in frame.columns:
        return frame
    ids = frame["id"]
    if not ids.null_count() and ids.flags["SORTED_ASC"]:
        return frame
    order = text_order(ids) if frame.height >= _MIN_ROWS else None
    if order is None:
        return frame.sort("id", maintain_order=True, nulls_last=nulls_last)
    return frame[order].with_columns(pl.col("id").set_sorted())
