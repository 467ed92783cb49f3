"""Small numeric helpers shared by the fits of `arena.rank`."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["expit"]

FloatArray = NDArray[np.float64]


def expit(x: NDArray[np.floating]) -> FloatArray:
    """The logistic function 1 / (1 + exp(-x)) (0 where exp(-x) overflows)."""
    with np.errstate(over="ignore"):
        out: FloatArray = 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))
    return out
