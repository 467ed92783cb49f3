"""Gradient and Hessian of the style model's likelihood (numba), all sets at once.

One pass over the answer-pair groups per set accumulates what the NumPy
version built from a dozen (groups x sets) arrays and sparse products: for a
group with models `a`, `b`, style differences `d` and (won, played) totals,

    eta = theta_a - theta_b + d . beta,   p = 1 / (1 + exp(-eta)),
    residual = played * p - won,          curve = played * p * (1 - p),

the gradient gains `residual` at `a`, minus it at `b` and `d * residual` at
the coefficients; the Hessian the matching `curve` terms. Sets are split
among threads (the kernel releases the GIL).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

from arena.rank._cores import cores
from arena.rank._jit import njit

__all__ = ["gradient_and_hessian", "group_totals"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Below this many (set, group) cells a second thread costs more than it saves.
_THREAD_CELLS = 200_000


@njit(cache=True, nogil=True)
def _accumulate(
    theta: FloatArray,
    beta: FloatArray,
    a: IntArray,
    b: IntArray,
    d: FloatArray,
    won: FloatArray,
    played: FloatArray,
    rows: IntArray,
    first: int,
    last: int,
    grad: FloatArray,
    hess: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Sets first..last-1 of `theta`/`beta` (their totals are rows `rows[i]` of
    `won`/`played`): likelihood parts of the gradient and Hessian, added in.

    The sums run per ordered pair of models (a few hundred cells that stay in
    cache) and are spread over the Hessian once per set.
    """
    c = theta.shape[1]
    k = beta.shape[1]
    pair_resid = np.zeros(c * c)
    pair_curve = np.zeros(c * c)
    pair_cross = np.zeros((c * c, k))
    coef_grad = np.zeros(k)
    coef_hess = np.zeros((k, k))
    for i in range(first, last):
        row = rows[i]
        th = theta[i]
        be = beta[i]
        n_row = played[row]
        w_row = won[row]
        pair_resid[:] = 0.0
        pair_curve[:] = 0.0
        pair_cross[:] = 0.0
        coef_grad[:] = 0.0
        coef_hess[:] = 0.0
        for g in range(a.shape[0]):
            n = n_row[g]
            if n == 0.0:
                continue  # no battle of this pair in this set: no term
            ga = a[g]
            gb = b[g]
            eta = th[ga] - th[gb]
            for f in range(k):
                eta += d[g, f] * be[f]
            p = 1.0 / (1.0 + math.exp(-eta))
            np_ = n * p
            resid = np_ - w_row[g]
            curve = np_ * (1.0 - p)
            cell = ga * c + gb
            pair_resid[cell] += resid
            pair_curve[cell] += curve
            for f in range(k):
                df = d[g, f]
                coef_grad[f] += df * resid
                cross = curve * df
                pair_cross[cell, f] += cross
                for h in range(k):
                    coef_hess[f, h] += cross * d[g, h]
        for ga in range(c):
            for gb in range(c):
                cell = ga * c + gb
                resid = pair_resid[cell]
                curve = pair_curve[cell]
                grad[i, ga] += resid
                grad[i, gb] -= resid
                hess[i, ga, ga] += curve
                hess[i, gb, gb] += curve
                hess[i, ga, gb] -= curve
                hess[i, gb, ga] -= curve
                for f in range(k):
                    hess[i, ga, c + f] += pair_cross[cell, f]
                    hess[i, gb, c + f] -= pair_cross[cell, f]
        for f in range(k):
            grad[i, c + f] += coef_grad[f]
            for h in range(k):
                hess[i, c + f, c + h] += coef_hess[f, h]
            for m in range(c):  # the coefficient rows mirror their columns
                hess[i, c + f, m] = hess[i, m, c + f]


@njit(cache=True, nogil=True)
def _totals(
    weights: FloatArray,
    mult: FloatArray,
    value: FloatArray,
    count: FloatArray,
    question: IntArray,
    a: IntArray,
    b: IntArray,
    first: int,
    last: int,
    won: FloatArray,
    played: FloatArray,
    beats: FloatArray,
) -> None:  # pragma: no cover - compiled
    reviewers = weights.shape[1]
    for s in range(first, last):
        for g in range(a.shape[0]):
            m = mult[s, question[g]]
            if m == 0.0:
                won[s, g] = 0.0
                played[s, g] = 0.0
                continue
            w = 0.0
            n = 0.0
            for r in range(reviewers):
                w += weights[s, r] * value[g, r]
                n += weights[s, r] * count[g, r]
            w *= m
            n *= m
            won[s, g] = w
            played[s, g] = n
            beats[s, a[g], b[g]] += w
            beats[s, b[g], a[g]] += n - w


def group_totals(
    weights: FloatArray,
    mult: FloatArray,
    value: FloatArray,
    count: FloatArray,
    question: IntArray,
    a: IntArray,
    b: IntArray,
    c: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per set (rows of `weights` (S, R) and `mult` (S, Q)) and answer-pair group:
    the weighted win value of A and the weighted count, `mult[s, question] *
    weights[s] . value[g]` and likewise with `count`; and the "beats" matrix
    (S, C, C) of each set, the win value of each model over each other."""
    sets = weights.shape[0]
    groups = a.shape[0]
    won = np.empty((sets, groups))
    played = np.empty((sets, groups))
    beats = np.zeros((sets, c, c))
    args = (
        np.ascontiguousarray(weights, dtype=np.float64),
        np.ascontiguousarray(mult, dtype=np.float64),
        value,
        count,
        question,
        a,
        b,
    )

    def part(first: int, last: int) -> None:
        _totals(*args, first, last, won, played, beats)

    _by_sets(sets, groups, part)
    return won, played, beats


def _by_sets(sets: int, groups: int, work: Callable[[int, int], None]) -> None:
    """Run `work(first, last)` over consecutive slices of the sets, one per thread
    (one slice when the sets times groups are too few to share)."""
    threads = 1 if sets * groups < _THREAD_CELLS or sets < 2 else max(1, min(cores(), sets))
    bounds = np.linspace(0, sets, threads + 1).astype(np.int64).tolist()
    if threads == 1:
        work(0, sets)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, bounds[:-1], bounds[1:]))


def gradient_and_hessian(
    params: FloatArray,
    a: IntArray,
    b: IntArray,
    d: FloatArray,
    won: FloatArray,
    played: FloatArray,
    rows: IntArray,
) -> tuple[FloatArray, FloatArray]:
    """Likelihood gradient (S, C+K) and Hessian (S, C+K, C+K) at `params` (S, C+K),
    set i's totals being rows `rows[i]` of `won` and `played` (sets x groups)."""
    sets, size = params.shape
    k = d.shape[1]
    c = size - k
    theta = np.ascontiguousarray(params[:, :c])
    beta = np.ascontiguousarray(params[:, c:])
    grad = np.zeros((sets, size))
    hess = np.zeros((sets, size, size))
    rows = np.ascontiguousarray(rows, dtype=np.int64)

    def part(first: int, last: int) -> None:
        _accumulate(theta, beta, a, b, d, won, played, rows, first, last, grad, hess)

    _by_sets(sets, a.shape[0], part)
    return grad, hess
