"""Compiled loop of the Elo trajectory (numba): ratings part-way through each review order.

Imported by `arena.rank._trajectory` when first needed. The orders are those of
weighted Elo (`arena.rank._elo_kernel.shuffle` from the same start states), so
the trajectory's last point is the Elo rating itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._elo_kernel import shuffle
from arena.rank._jit import njit

__all__ = ["run_trajectory"]

FloatArray = NDArray[np.float64]
StateArray = NDArray[np.uint64]


@njit(cache=True, nogil=True)
def run_trajectory(
    starts: StateArray,
    codes: NDArray[Any],
    bits: int,
    table: FloatArray,
    n_models: int,
    checkpoints: NDArray[np.int64],
    out: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Add each order's ratings (nats above the start) after `checkpoints[p]` reviews to `out[p]`.

    `checkpoints` is sorted, within 0..len(codes); `codes` and `table` are those
    of `arena.rank._elo` (a review packs model A, model B and its kind).
    """
    n = codes.shape[0]
    field = (1 << bits) - 1
    buffer = np.empty_like(codes)
    ratings = np.zeros(n_models)
    points = checkpoints.shape[0]
    for order in range(starts.shape[0]):
        buffer[:] = codes
        shuffle(buffer, starts[order])
        ratings[:] = 0.0
        p = 0
        for i in range(n):
            while p < points and checkpoints[p] == i:
                out[p] += ratings
                p += 1
            code = buffer[i]
            a = code & field
            b = (code >> bits) & field
            kind = code >> (2 * bits)
            rating_a = ratings[a]
            rating_b = ratings[b]
            delta = table[kind, 1] - table[kind, 0] / (1.0 + math.exp(rating_b - rating_a))
            ratings[a] = rating_a + delta
            ratings[b] = rating_b - delta
        while p < points:
            out[p] += ratings
            p += 1
