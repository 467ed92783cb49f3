"""Compiled loops of weighted Elo (numba): NumPy's PCG64 permutations replayed, Elo updates.

`arena.rank._elo` imports this module when it first needs it, so commands that
never rate by Elo do not load numba. Everything here reproduces NumPy bit for
bit: `_shuffle` from the state `_order_starts` records gives the same order as
`numpy.random.default_rng(seed).permutation(n)` at that point of the stream.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic
from numpy.typing import NDArray

from arena.rank._jit import njit

__all__ = ["order_starts", "pack_reviews", "run_orders", "shuffle"]

FloatArray = NDArray[np.float64]
StateArray = NDArray[np.uint64]

# PCG64 (XSL-RR 128/64) as NumPy implements it.
_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U32 = np.uint64(32)
_U58 = np.uint64(58)
_U63 = np.uint64(63)
_U64 = np.uint64(64)


def _mulhi_typer(typingctx: Any, a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    """High 64 bits of the 128-bit product of two uint64 (one native multiply)."""
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return signature, codegen


_mulhi: Any = intrinsic(_mulhi_typer)


@njit(cache=True, nogil=True)
def _interval(
    hi: np.uint64,
    lo: np.uint64,
    inc_hi: np.uint64,
    inc_lo: np.uint64,
    has32: np.uint64,
    held: np.uint64,
    top: np.uint64,
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64]:  # pragma: no cover
    """NumPy's random_interval(top) on PCG64 (top < 2**32): masked rejection over
    next_uint32, which hands out the low then the high half of one 64-bit output.

    Returns the new (hi, lo, has32, held) state and the value.
    """
    mask = top
    mask |= mask >> _U1
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    while True:
        if has32 != _U0:
            has32 = _U0
            value = held
        else:
            # state = state * MULT + inc (mod 2**128), output XSL-RR of the new state
            new_lo = lo * _MULT_LO
            new_hi = _mulhi(lo, _MULT_LO) + hi * _MULT_LO + lo * _MULT_HI
            lo = new_lo + inc_lo
            hi = new_hi + inc_hi + (_U1 if lo < new_lo else _U0)
            rot = hi >> _U58
            x = hi ^ lo
            output = (x >> rot) | (x << ((_U64 - rot) & _U63))
            has32 = _U1
            held = output >> _U32
            value = output & _LOW32
        value &= mask
        if value <= top:
            return hi, lo, has32, held, value


@njit(cache=True, nogil=True)
def order_starts(state: StateArray, n: int, orders: int) -> StateArray:  # pragma: no cover
    """Generator state before each of `orders` successive `permutation(n)` draws.

    `state` = [hi, lo, inc_hi, inc_lo, has_uint32, uinteger]; only the draws are
    replayed, nothing is shuffled.
    """
    starts = np.empty((orders, 6), dtype=np.uint64)
    hi, lo, inc_hi, inc_lo, has32, held = (
        state[0],
        state[1],
        state[2],
        state[3],
        state[4],
        state[5],
    )
    for order in range(orders):
        starts[order, 0] = hi
        starts[order, 1] = lo
        starts[order, 2] = inc_hi
        starts[order, 3] = inc_lo
        starts[order, 4] = has32
        starts[order, 5] = held
        for i in range(n - 1, 0, -1):
            hi, lo, has32, held, _ = _interval(hi, lo, inc_hi, inc_lo, has32, held, np.uint64(i))
    return starts


@njit(cache=True, nogil=True)
def shuffle(values: NDArray[Any], start: StateArray) -> None:  # pragma: no cover - compiled
    """Shuffle `values` in place exactly as NumPy's `Generator.shuffle` from state `start`,
    so `values` becomes `values[permutation(len(values))]`."""
    hi, lo, inc_hi, inc_lo, has32, held = (
        start[0],
        start[1],
        start[2],
        start[3],
        start[4],
        start[5],
    )
    for i in range(values.shape[0] - 1, 0, -1):
        hi, lo, has32, held, j = _interval(hi, lo, inc_hi, inc_lo, has32, held, np.uint64(i))
        swapped = values[i]
        values[i] = values[j]
        values[j] = swapped


@njit(cache=True, nogil=True)
def pack_reviews(
    target: NDArray[Any],
    model_a: NDArray[Any],
    model_b: NDArray[Any],
    reviewer: NDArray[Any],
    score: NDArray[np.int8],
    own: NDArray[np.int64],
    bits: int,
) -> int:  # pragma: no cover - compiled
    """Pack the rated reviews into `target` in log order; the number packed.

    Review k is rated unless its reviewer competes in it (`own[reviewer]`, the
    reviewer's contestant code or -1, is model A or B); it is packed as
    `model_a | model_b << bits | kind << (2 * bits)`, `kind = reviewer * 3 + score + 1`.
    """
    k = 0
    for i in range(model_a.shape[0]):
        a = np.int64(model_a[i])
        b = np.int64(model_b[i])
        r = np.int64(reviewer[i])
        mine = own[r]
        if mine == a or mine == b:
            continue
        target[k] = ((r * 3 + np.int64(score[i]) + 1) << (2 * bits)) | (b << bits) | a
        k += 1
    return k


@njit(cache=True, nogil=True)
def run_orders(
    order_ids: NDArray[np.int64],
    starts: StateArray,
    model_a: NDArray[Any],
    model_b: NDArray[Any],
    reviewer: NDArray[Any],
    score: NDArray[np.int8],
    own: NDArray[np.int64],
    bits: int,
    table: FloatArray,
    n_models: int,
    out: FloatArray,
    buffers: NDArray[Any],
) -> None:  # pragma: no cover - compiled
    """Final ratings (nats above the start) of each order in `order_ids` into `out[order]`.

    The rated reviews (see `pack_reviews`) are packed into `buffers` (one row per
    interleaved order), shuffled there and read in sequence: no packed copy of
    the reviews outlives a row. With `table[kind]` = (gain, gain * target), an
    update is `delta = gain * target - gain * expit(R_a - R_b)`.
    """
    group = buffers.shape[0]
    n = buffers.shape[1]
    field = (1 << bits) - 1
    ratings = np.zeros((group, n_models))
    for first in range(0, order_ids.shape[0], group):
        size = min(group, order_ids.shape[0] - first)
        for g in range(size):
            pack_reviews(buffers[g], model_a, model_b, reviewer, score, own, bits)
            shuffle(buffers[g], starts[order_ids[first + g]])
        ratings[:] = 0.0
        for i in range(n):
            for g in range(size):
                code = buffers[g, i]
                a = code & field
                b = (code >> bits) & field
                kind = code >> (2 * bits)
                rating_a = ratings[g, a]
                rating_b = ratings[g, b]
                delta = table[kind, 1] - table[kind, 0] / (1.0 + math.exp(rating_b - rating_a))
                ratings[g, a] = rating_a + delta
                ratings[g, b] = rating_b - delta
        for g in range(size):
            out[order_ids[first + g]] = ratings[g]
