"""Weighted online Elo (PRD paper, Algorithm 1), averaged over random review orders.

Each review updates its two contestants: with `e = 1 / (1 + 10^((R_j-R_i)/400))`
and `s_A = (1 - score)/2`, `R_i += w K (s_A - e)` and `R_j -= w K (s_A - e)`
(the published `R_j += w K (s_B - e_B)`, as `s_B - e_B = -(s_A - e)`). `w` is
the reviewer's mean-normalised weight; weights start equal and are re-derived
from the ratings (min-max, normalise) after each pass until they settle.

Online Elo is sequential, so the speed comes from running all the random
orders side by side: one numpy step updates the same position of every order.
Ratings are kept in natural log-odds units inside the loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from arena.rank._encode import ReviewSet
from arena.rank._peerrank import weights_from_scores

__all__ = ["EloResult", "weighted_elo"]

FloatArray = NDArray[np.float64]

K_FACTOR = 32.0
START_RATING = 1000.0
_NAT_PER_ELO = math.log(10.0) / 400.0
# Orders run side by side hold n_reviews * orders int32 indices; at most this many.
_INDEX_BUDGET = 100_000_000
# Steps whose indices are gathered in one go.
_CHUNK_STEPS = 2048


@dataclass(frozen=True, eq=False)
class EloResult:
    """Mean weighted-Elo ratings over the random orders, and the Elo-derived weights."""

    rating: FloatArray  # (C,); START_RATING for a model without battles
    weights: FloatArray  # (R,) the weights used by the last pass, sum 1
    passes: int
    converged: bool
    orders: int


def _run_orders(
    order_index: NDArray[np.int32],
    a: NDArray[np.int32],
    b: NDArray[np.int32],
    gain: FloatArray,
    target: FloatArray,
    n_models: int,
) -> FloatArray:
    """Final ratings (orders, C), in nats above the start, along each row of `order_index`."""
    orders, steps = order_index.shape
    offsets = np.arange(orders, dtype=np.int64) * n_models
    ratings = np.zeros(orders * n_models)
    take = ratings.take
    for start in range(0, steps, _CHUNK_STEPS):
        index = np.ascontiguousarray(order_index[:, start : start + _CHUNK_STEPS].T)
        step_gain = gain[index]
        # delta = gain * (target - expected) = gain_target - gain * expected
        rows = zip(
            a[index] + offsets,
            b[index] + offsets,
            step_gain,
            step_gain * target[index],
            strict=True,
        )
        for pos_a, pos_b, g, g_target in rows:
            rating_a = take(pos_a)
            rating_b = take(pos_b)
            delta = g_target - g * expit(rating_a - rating_b)
            ratings[pos_a] = rating_a + delta
            ratings[pos_b] = rating_b - delta
    return ratings.reshape(orders, n_models)


def _mean_ratings(
    rs: ReviewSet, groups: list[NDArray[np.int32]], weights: FloatArray
) -> FloatArray:
    """Mean Elo (C,) over all orders for one set of reviewer weights."""
    mean_normalised = weights * rs.n_reviewers
    gain = K_FACTOR * _NAT_PER_ELO * mean_normalised[rs.reviewer]
    target = (1.0 - rs.score.astype(np.float64)) * 0.5
    total = np.zeros(rs.n_models)
    count = 0
    for group in groups:
        final = _run_orders(group, rs.model_a, rs.model_b, gain, target, rs.n_models)
        total += final.sum(axis=0)
        count += final.shape[0]
    return START_RATING + total / max(count, 1) / _NAT_PER_ELO


def weighted_elo(
    rs: ReviewSet,
    *,
    orders: int = 100,
    seed: int = 0,
    tol: float = 1e-6,
    max_passes: int = 10,
) -> EloResult:
    """Weighted Elo averaged over `orders` seeded random review orders."""
    n = rs.n_battles
    n_reviewers = rs.n_reviewers
    weights = np.full(n_reviewers, 1.0 / max(n_reviewers, 1))
    if n == 0 or orders < 1:
        return EloResult(np.full(rs.n_models, START_RATING), weights, 0, True, max(orders, 0))
    rng = np.random.default_rng(seed)
    per_group = max(1, min(orders, _INDEX_BUDGET // n))
    groups: list[NDArray[np.int32]] = []
    remaining = orders
    while remaining > 0:
        size = min(per_group, remaining)
        group = np.empty((size, n), dtype=np.int32)
        for row in range(size):
            group[row] = rng.permutation(n)
        groups.append(group)
        remaining -= size
    battled = np.bincount(rs.model_a, minlength=rs.n_models) + np.bincount(
        rs.model_b, minlength=rs.n_models
    )
    rating = _mean_ratings(rs, groups, weights)
    passes, converged = 1, False
    while passes < max_passes:
        scores = np.where(battled > 0, rating, np.nan)[None]
        new = weights_from_scores(scores, rs.reviewer_as_contestant)[0]
        moved = float(np.abs(new - weights).max(initial=0.0))
        if moved < tol:
            converged = True
            break
        weights = new
        rating = _mean_ratings(rs, groups, weights)
        passes += 1
    return EloResult(rating, weights, passes, converged, orders)
