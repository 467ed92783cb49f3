"""Plain NumPy twins of the compiled passes, for logs too small to pay for numba.

Loading numba and its cached kernels costs a process 0.5-1 s (more on a busy
machine) before the first review is counted; on a small log (the demo's
5,400 reviews) the whole ranking in NumPy takes less than that. Below
`COMPILED_MIN_ROWS` reviews the passes of `arena.rank` run here and numba is
never imported; from there on the compiled kernels run (`_encode_kernel`,
`_text_codes`, `_elo_kernel`, `_style_kernel`). Each twin computes the same
numbers as its kernel (sums may differ in the last bits, being added in another
order); the tests compare them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

if TYPE_CHECKING:
    from arena.rank._encode_rows import RowPass

__all__ = [
    "COMPILED_MIN_ROWS",
    "compiled",
    "count_plain",
    "elo_orders_plain",
    "expit",
    "fold_plain",
    "pass_plain",
    "prefetch_kernels",
    "style_gradient_plain",
    "style_totals_plain",
    "text_codes_plain",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# From this many reviews (rows of the reviews frame, or counted battles) on,
# the compiled kernels run. Measured with benchmarks/bench_small_rank.py (see
# docs/scale.md): below it the NumPy passes plus no numba import beat the kernels
# (in CPU and wall time at 40,000 reviews; even at 60,000; the kernels from 100,000).
COMPILED_MIN_ROWS = 50_000

_log = logging.getLogger(__name__)

# Outcome codes of `arena.rank._encode_rows` (restated so this module imports nothing of it).
_INVALID, _FAILED, _LEFT_OUT, _UNKNOWN = 3, 4, 5, 6


def compiled(rows: int) -> bool:
    """Whether a pass over `rows` rows uses the compiled kernel."""
    return rows >= COMPILED_MIN_ROWS


def prefetch_kernels(rows: Callable[[], int]) -> threading.Thread:
    """Ready numba and its kernel cache in a daemon thread when `rows()` (called there: a
    size hint, such as the rows of a log's parts) reaches COMPILED_MIN_ROWS.

    A caller starts this before it reads its reviews: the reading (polars) and
    this (mostly the interpreter) then overlap, and the ranking finds the
    kernels ready instead of spending about a second on them. Below the
    threshold nothing is loaded. A failure here is only logged: the ranking
    loads the kernels itself, and meets the same error there.
    """

    def ready() -> None:
        try:
            if compiled(rows()):
                from arena.rank._encode_kernel import _warm

                _warm(1)
        except Exception as exc:  # the ranking loads them itself
            _log.debug("compiled kernels not prefetched: %s", exc)

    thread = threading.Thread(target=ready, name="arena-kernels", daemon=True)
    thread.start()
    return thread


def expit(x: NDArray[np.floating]) -> FloatArray:
    """The logistic function 1 / (1 + exp(-x)) (0 where exp(-x) overflows)."""
    with np.errstate(over="ignore"):
        out: FloatArray = 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))
    return out


def text_codes_plain(column: pl.Series) -> tuple[NDArray[np.int32], list[str]]:
    """Codes of a string column in order of first appearance (-1 for null), and their texts."""
    table: dict[str, int] = {}
    add = table.setdefault
    codes = np.fromiter(
        (-1 if v is None else add(v, len(table)) for v in column.to_list()),
        dtype=np.int32,
        count=column.len(),
    )
    return codes, list(table)


def pass_plain(
    codes: tuple[NDArray[np.integer[Any]], ...],
    cq: NDArray[np.integer[Any]],
    lookups: tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]],
    outcomes: tuple[NDArray[np.int8], NDArray[np.int8]],
    judge_as: IntArray,
    exclude_self: bool,
    n_question_codes: int,
    found: RowPass,
) -> int:
    """The row pass of `arena.rank._encode_kernel._pass` in array operations."""
    ca, cb, cr, cv, cs = codes
    a = lookups[0][ca] if ca.size else np.zeros(0, np.int32)
    b = lookups[1][cb] if cb.size else np.zeros(0, np.int32)
    r = lookups[2][cr] if cr.size else np.zeros(0, np.int32)
    keep = (a >= 0) & (b >= 0) & (r >= 0)
    found.tally[_LEFT_OUT] += int(ca.size - np.count_nonzero(keep))
    if exclude_self:
        own = judge_as[np.where(keep, r, 0)] if judge_as.size else np.full(r.size, -1)
        mine = keep & (own >= 0) & ((own == a) | (own == b))
        left = int(np.count_nonzero(mine))
        found.found[2] += left
        found.tally[_LEFT_OUT] += left
        keep &= ~mine
    rows = np.flatnonzero(keep)
    a, b, r = a[rows], b[rows], r[rows]
    same = np.flatnonzero(a == b)
    if same.size and found.found[0] < 0:
        found.found[0] = rows[same[0]]
    code = cv[rows]
    verdicts = outcomes[0] if outcomes[0].size else np.zeros(1, np.int8)
    outcome = np.where(code < 0, _FAILED, verdicts[np.maximum(code, 0)]).astype(np.int8)
    unknown = np.flatnonzero(outcome == _UNKNOWN)
    if unknown.size:
        if found.found[1] < 0:
            found.found[1] = rows[unknown[0]]
        outcome[unknown] = _INVALID
    if cs.size:
        status = cs[rows]
        statuses = outcomes[1] if outcomes[1].size else np.zeros(1, np.int8)
        override = statuses[np.maximum(status, 0)]
        outcome = np.where((status >= 0) & (override > outcome), override, outcome)
    found.tally[: _LEFT_OUT + 1] += np.bincount(outcome, minlength=_LEFT_OUT + 1)[: _LEFT_OUT + 1]
    reviewers = found.per_reviewer.shape[1]
    found.per_reviewer[0] += np.bincount(r, minlength=reviewers)[:reviewers]
    found.per_reviewer[1] += np.bincount(r[outcome == _INVALID], minlength=reviewers)[:reviewers]
    found.per_reviewer[2] += np.bincount(r[outcome == _FAILED], minlength=reviewers)[:reviewers]
    counted = outcome < _INVALID
    n = int(np.count_nonzero(counted))
    kept = rows[counted]
    found.model_a[:n] = a[counted]
    found.model_b[:n] = b[counted]
    found.reviewer[:n] = r[counted]
    found.score[:n] = outcome[counted] - 1
    found.question[:n] = cq[kept]
    found.row[:n] = kept
    if n_question_codes > 0:
        found.question_seen[cq[kept]] = True
    return n


def count_plain(
    columns: tuple[
        NDArray[np.int8], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]
    ],
    first: int,
    out: NDArray[np.int32],
) -> None:
    """`arena.rank._encode_kernel._count`: battles into `out` (3, questions, R, C, C)."""
    category, question, reviewer, model_a, model_b = columns
    q = question.astype(np.int64) - first
    inside = (q >= 0) & (q < out.shape[1])
    flat = np.ravel_multi_index(
        (category[inside], q[inside], reviewer[inside], model_a[inside], model_b[inside]),
        out.shape,
    )
    out += np.bincount(flat, minlength=out.size).reshape(out.shape).astype(out.dtype)


def fold_plain(
    block: NDArray[np.int32],
    count: IntArray,
    swap: FloatArray,
    fleiss: FloatArray,
    per_model: IntArray,
    features: NDArray[np.integer[Any]],
) -> None:
    """`arena.rank._encode_kernel._fold` in array operations (same arguments)."""
    n_c = block.shape[-1]
    wide = block.astype(np.int64)
    tie, b_win, a_win = wide[0], wide[1], wide[2]  # (Q, R, C, C)
    count += wide.sum(axis=1)
    if features.shape[0] > 0:
        doubled = 2 * a_win + tie + np.swapaxes(2 * b_win + tie, -1, -2)
        features[:] = doubled.reshape(features.shape)
    judged = (tie + b_win + a_win) > 0
    upper = np.triu(np.ones((n_c, n_c), dtype=bool), 1)
    both = judged & np.swapaxes(judged, -1, -2) & upper
    first = np.sign(a_win - b_win)
    agreed = both & ((first + np.swapaxes(first, -1, -2)) == 0)
    swap[0] += both.sum(axis=(0, 2, 3))
    swap[1] += agreed.sum(axis=(0, 2, 3))
    panel = wide.sum(axis=2)  # (3, Q, C, C)
    raters = panel.sum(axis=0)
    several = raters >= 2
    if several.any():
        r = raters[several].astype(np.float64)
        squares = (panel[:, several].astype(np.float64) ** 2).sum(axis=0)
        fleiss[0] += float(((squares - r) / (r * (r - 1.0))).sum())
        fleiss[1] += float(np.count_nonzero(several))
        fleiss[2:5] += panel[:, several].sum(axis=1)
    met = raters > 0
    per_model += (met.any(axis=2) | met.any(axis=1)).sum(axis=0)


def elo_orders_plain(
    model_a: NDArray[np.integer],
    model_b: NDArray[np.integer],
    kind: IntArray,
    perms: NDArray[np.int32],
    table: FloatArray,
    n_models: int,
) -> FloatArray:
    """Final ratings (orders, C), nats above the start, of every order in `perms` (orders, n).

    All orders advance together: step `t` applies the `t`-th review of every order
    at once, with the update of `arena.rank._elo_kernel.run_orders`.
    """
    orders, n = perms.shape
    base = (np.arange(orders, dtype=np.int64) * n_models)[None, :]
    order_major = perms.T  # (n, orders): step t's review of each order
    # Step t's cells: model A of every order, then model B of every order (all distinct).
    cells = np.concatenate(
        [model_a[order_major] + base, model_b[order_major] + base], axis=1
    ).astype(np.intp)
    kinds = kind[order_major]
    gain = table[kinds, 0]
    gain_target = table[kinds, 1]
    ratings = np.zeros(orders * n_models)
    pair = np.empty(2 * orders)
    for t in range(n):
        cell = cells[t]
        now = ratings[cell]
        delta = pair[:orders]
        np.subtract(now[orders:], now[:orders], out=delta)
        np.exp(delta, out=delta)
        delta += 1.0
        np.divide(gain[t], delta, out=delta)
        np.subtract(gain_target[t], delta, out=delta)
        np.negative(delta, out=pair[orders:])
        now += pair
        ratings[cell] = now
    out: FloatArray = ratings.reshape(orders, n_models)
    return out


def style_totals_plain(
    weights: FloatArray,
    mult: FloatArray,
    value: FloatArray,
    count: FloatArray,
    question: IntArray,
    a: IntArray,
    b: IntArray,
    c: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """`arena.rank._style_kernel.group_totals` in array operations."""
    sets = weights.shape[0]
    m = mult[:, question]
    won: FloatArray = m * (weights @ value.T)
    played: FloatArray = m * (weights @ count.T)
    forward = a * c + b
    backward = b * c + a
    cells = np.concatenate([forward, backward])
    offsets = (np.arange(sets, dtype=np.int64) * c * c)[:, None]
    values = np.concatenate([won, played - won], axis=1)
    beats: FloatArray = np.bincount(
        (cells[None, :] + offsets).ravel(), weights=values.ravel(), minlength=sets * c * c
    ).astype(np.float64)
    return won, played, beats.reshape(sets, c, c)


def _by_pair(values: FloatArray, cell: IntArray, cells: int) -> FloatArray:
    """Sums of `values` (S, G, ...) over the groups of each cell: (S, cells, ...)."""
    order = np.argsort(cell, kind="stable")
    sorted_cells = cell[order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    out = np.zeros((values.shape[0], cells, *values.shape[2:]))
    if starts.size:
        out[:, sorted_cells[starts]] = np.add.reduceat(values[:, order], starts, axis=1)
    return out


def style_gradient_plain(
    params: FloatArray,
    a: IntArray,
    b: IntArray,
    d: FloatArray,
    won: FloatArray,
    played: FloatArray,
    rows: IntArray,
) -> tuple[FloatArray, FloatArray]:
    """`arena.rank._style_kernel.gradient_and_hessian` in array operations: the sums
    run per ordered pair of models, then spread over the gradient and Hessian."""
    sets, size = params.shape
    k = d.shape[1]
    c = size - k
    theta, beta = params[:, :c], params[:, c:]
    n = played[rows]
    p = expit(theta[:, a] - theta[:, b] + beta @ d.T)  # (S, G)
    resid = np.where(n == 0.0, 0.0, n * p - won[rows])
    curve = n * p * (1.0 - p)
    cell = a * c + b
    pair_resid = _by_pair(resid, cell, c * c).reshape(sets, c, c)
    pair_curve = _by_pair(curve, cell, c * c).reshape(sets, c, c)
    weighted = curve[:, :, None] * d[None, :, :]  # (S, G, K)
    pair_cross = _by_pair(weighted, cell, c * c).reshape(sets, c, c, k)
    grad = np.empty((sets, size))
    grad[:, :c] = pair_resid.sum(axis=2) - pair_resid.sum(axis=1)
    grad[:, c:] = resid @ d
    hess = np.empty((sets, size, size))
    block = -(pair_curve + np.swapaxes(pair_curve, 1, 2))
    diagonal = np.arange(c)
    block[:, diagonal, diagonal] += pair_curve.sum(axis=2) + pair_curve.sum(axis=1)
    hess[:, :c, :c] = block
    cross = pair_cross.sum(axis=2) - pair_cross.sum(axis=1)  # (S, C, K)
    hess[:, :c, c:] = cross
    hess[:, c:, :c] = np.swapaxes(cross, 1, 2)
    hess[:, c:, c:] = np.swapaxes(weighted, 1, 2) @ d
    return grad, hess


def text_codes_all(columns: Sequence[pl.Series]) -> list[tuple[NDArray[np.int32], list[str]]]:
    """`text_codes_plain` of each column (taken as text)."""
    return [
        text_codes_plain(column if column.dtype == pl.String else column.cast(pl.String))
        for column in columns
    ]
