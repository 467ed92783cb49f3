"""The compiled loop of weighted Elo (numba): the one pass of `arena.rank` that is compiled.

Online Elo is sequential within an order: each review's update reads the
ratings the previous one wrote, so no array operation can take many reviews
at once, and an interpreted loop over a million reviews is far too slow.
`arena.rank._elo` runs this kernel on logs of `COMPILED_MIN_ROWS` rated
reviews or more, and imports this module (and numba) only then.

The orders are not drawn here: `arena.rank._elo` draws them with NumPy
(`numpy.random.default_rng(seed).permutation(n)`, one order after the other)
and passes in the reviews already put in each order.
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


@njit(cache=True, nogil=True)
def run_orders(
    shuffled: NDArray[Any],
    bits: int,
    table: FloatArray,
    n_models: int,
    checkpoints: NDArray[np.int64],
    out: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Ratings (nats above the start) of order `k` after `checkpoints[p]` reviews into
    `out[p, k]`, for each order `k`: row `k` of `shuffled` holds the reviews in that order.

    A review is packed as `model_a | model_b << bits | kind << (2 * bits)`;
    with `table[kind]` = (gain, gain * target) an update is
    `delta = gain * target - gain / (1 + exp(R_b - R_a))`, `R_a += delta`, `R_b -= delta`.
    `checkpoints` is sorted, within 0..n.
    """
    orders, n = shuffled.shape
    field = (1 << bits) - 1
    points = checkpoints.shape[0]
    ratings = np.zeros((_INTERLEAVE, n_models))
    for first in range(0, orders, _INTERLEAVE):
        size = min(_INTERLEAVE, orders - first)
        ratings[:] = 0.0
        p = 0
        for i in range(n):
            while p < points and checkpoints[p] == i:
                for g in range(size):
                    out[p, first + g] = ratings[g]
                p += 1
            for g in range(size):
                code = shuffled[first + g, i]
                a = code & field
                b = (code >> bits) & field
                kind = code >> (2 * bits)
                rating_a = ratings[g, a]
                rating_b = ratings[g, b]
                delta = table[kind, 1] - table[kind, 0] / (1.0 + math.exp(rating_b - rating_a))
                ratings[g, a] = rating_a + delta
                ratings[g, b] = rating_b - delta
        while p < points:
            for g in range(size):
                out[p, first + g] = ratings[g]
            p += 1


def warm() -> None:
    """Load numba and this kernel (from numba's cache) for the common packing (two
    bytes a review), on one review: what `arena.rank.prefetch_kernels` does early."""
    out = np.zeros((1, 1, 2))
    run_orders(
        np.array([[2]], dtype=np.uint16),
        1,
        np.zeros((3, 2)),
        2,
        np.array([1], dtype=np.int64),
        out,
    )
