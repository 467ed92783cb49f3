"""The compiled loop of weighted Elo (numba): the one pass of `arena.rank` that is compiled.

Online Elo is sequential within an order: each review's update reads the
ratings the previous one wrote, so no array operation can take many reviews
at once, and an interpreted loop over a million reviews is far too slow.
`arena.rank._elo` runs this kernel on logs of `COMPILED_MIN_ROWS` rated
reviews or more, and imports this module (and numba) only then.

The kernel puts each order together as it goes, by the documented scheme of
`arena.rank._elo` (a Fisher-Yates shuffle whose draws are a hash of the
order's key and the step): step `i` picks the review at position `i` of the
order and rates it at once. A single pass keeps no shuffled copy of the
reviews; when several passes replay the orders, the first keeps them and the
others read them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["run_orders", "warm"]

FloatArray = NDArray[np.float64]

# Orders one loop advances side by side: their updates are independent, so the CPU
# overlaps their dependency chains (each update waits for an `exp`).
_INTERLEAVE = 4
# SplitMix64's increment and finaliser (see `arena.rank._elo.order_hash`), as uint64
# constants: numba keeps the arithmetic in 64-bit unsigned integers.
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


@njit(cache=True, nogil=True)
def _mix(z: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    """SplitMix64's finaliser (a bijection of 64-bit integers)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _rate(
    ratings: FloatArray, g: int, code: Any, field: int, bits: int, table: FloatArray
) -> None:  # pragma: no cover - compiled
    """One update of order `g`'s ratings by the packed review `code`."""
    a = code & field
    b = (code >> bits) & field
    kind = code >> (2 * bits)
    rating_a = ratings[g, a]
    rating_b = ratings[g, b]
    delta = table[kind, 1] - table[kind, 0] / (1.0 + math.exp(rating_b - rating_a))
    ratings[g, a] = rating_a + delta
    ratings[g, b] = rating_b - delta


@njit(cache=True, nogil=True)
def run_orders(
    packed: NDArray[Any],
    keys: NDArray[np.uint64],
    store: NDArray[Any],
    stored: bool,
    bits: int,
    table: FloatArray,
    n_models: int,
    checkpoints: NDArray[np.int64],
    out: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Ratings (nats above the start) of order `k` after `checkpoints[p]` reviews into
    `out[p, k]`, for the order of key `keys[k]` over the reviews `packed` (log order).

    Step `i` of an order swaps position `i` of its copy of `packed` with position
    `i + ((h >> 32) * (n - i) >> 32)`, `h = mix64(key + (i + 1) * GAMMA)`, and
    rates the review now at `i`. The copies are `store[k]` when `store` has a row
    per order (they then hold the orders, and with `stored` they already do: read
    as they are, nothing drawn), else `store`'s rows are scratch, one per order
    run side by side (at most `_INTERLEAVE`, at least one). A review is packed as
    `model_a | model_b << bits | kind << (2 * bits)`; with `table[kind]` =
    (gain, gain * target) an update is
    `delta = gain * target - gain / (1 + exp(R_b - R_a))`, `R_a += delta`, `R_b -= delta`.
    `checkpoints` is sorted, within 0..n.
    """
    n = packed.shape[0]
    orders = keys.shape[0]
    field = (1 << bits) - 1
    points = checkpoints.shape[0]
    keep = store.shape[0] >= orders
    interleave = _INTERLEAVE if keep else min(_INTERLEAVE, store.shape[0])
    ratings = np.zeros((_INTERLEAVE, n_models))
    for first in range(0, orders, interleave):
        size = min(interleave, orders - first)
        rows = store[first : first + size] if keep else store[:size]
        if not stored:
            for g in range(size):
                rows[g] = packed
        ratings[:] = 0.0
        p = 0
        for i in range(n):
            while p < points and checkpoints[p] == i:
                for g in range(size):
                    out[p, first + g] = ratings[g]
                p += 1
            if stored:
                for g in range(size):
                    _rate(ratings, g, rows[g, i], field, bits, table)
                continue
            step = np.uint64(i + 1) * _GAMMA
            span = np.uint64(n - i)
            for g in range(size):
                h = _mix(keys[first + g] + step)
                j = i + np.int64(((h >> _S32) * span) >> _S32)
                code = rows[g, j]
                rows[g, j] = rows[g, i]
                rows[g, i] = code
                _rate(ratings, g, code, field, bits, table)
        while p < points:
            for g in range(size):
                out[p, first + g] = ratings[g]
            p += 1


def warm() -> None:
    """Load numba and this kernel (from numba's cache) for the common packing (two
    bytes a review), on one review: what `arena.rank.prefetch_kernels` does early."""
    out = np.zeros((1, 1, 2))
    run_orders(
        np.array([2], dtype=np.uint16),
        np.zeros(1, dtype=np.uint64),
        np.empty((1, 1), dtype=np.uint16),
        False,
        1,
        np.zeros((3, 2)),
        2,
        np.array([1], dtype=np.int64),
        out,
    )
