"""PRD's Figure 4 and weighted heatmap: Elo along the review sequence, weighted pair shares.

`elo_trajectory`: each model's weighted Elo after the first `t` reviews, for
evenly spaced `t` from 0 to all of them, averaged over the same fixed review
orders as the Elo column (the first `orders` orders of `ELO_ORDER_SEED`, see
`arena.rank._elo`) at the weights of its last pass,
over the reviews it rates; so the last point is the Elo column itself.

`weighted_pairwise`: the share of the weighted battles between `i` and `j`
won by `i` (ties half), each review weighted by its reviewer's weight, over
the reviews the ratings use: the pair matrix Bradley-Terry is fitted on,
as shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._elo import _NAT_PER_ELO, START_RATING, EloOrders, _step_table
from arena.rank._encode import ReviewSet
from arena.rank._ranking import ELO_ORDER_SEED, Ranking
from arena.rank._reliability import trusted_reviews, trusted_tensor

__all__ = [
    "EloTrajectory",
    "TRAJECTORY_POINTS",
    "elo_trajectory",
    "ranking_trajectory",
    "weighted_pairwise",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Points along the review sequence (the first is before any review).
TRAJECTORY_POINTS = 41


@dataclass(frozen=True, eq=False)
class EloTrajectory:
    """Mean weighted Elo (points, C) after `steps[p]` reviews, over `orders` orders."""

    steps: IntArray  # (points,) reviews applied, 0 .. n_battles
    rating: FloatArray  # (points, C); START_RATING before a model's first battle
    orders: int


def elo_trajectory(
    rs: ReviewSet,
    weights: FloatArray,
    *,
    orders: int = 100,
    seed: int = ELO_ORDER_SEED,
    points: int = TRAJECTORY_POINTS,
) -> EloTrajectory:
    """Weighted Elo of every review of `rs` at `weights` (R,), part-way through each order.

    Order `k` is the `k`-th order of `seed` (as in `weighted_elo`); `points` evenly
    spaced numbers of reviews from 0 to `rs.n_battles` (fewer when there are
    fewer reviews).
    """
    if orders < 1:
        raise ValueError(f"orders must be at least 1, not {orders}")
    if points < 2:
        raise ValueError(f"points must be at least 2, not {points}")
    n = rs.n_battles
    steps = np.unique(np.rint(np.linspace(0, n, points)).astype(np.int64))
    if n == 0:
        return EloTrajectory(steps, np.full((steps.size, rs.n_models), START_RATING), orders)
    replay = EloOrders(rs, orders, seed)
    table = _step_table(rs.n_reviewers, np.asarray(weights, dtype=np.float64))
    total = replay.ratings_at(table, steps).sum(axis=1)
    rating: FloatArray = START_RATING + total / orders / _NAT_PER_ELO
    return EloTrajectory(steps, rating, orders)


def ranking_trajectory(
    ranking: Ranking, *, points: int = TRAJECTORY_POINTS
) -> EloTrajectory | None:
    """The Elo trajectory behind `ranking.elo` (None without Elo or without battles)."""
    elo = ranking.elo
    if elo is None or elo.orders < 1 or ranking.reviews.n_battles == 0:
        return None
    rated = trusted_reviews(ranking.reviews) if ranking.reliability is not None else ranking.reviews
    return elo_trajectory(rated, elo.weights, orders=elo.orders, points=points)


def weighted_pairwise(ranking: Ranking) -> FloatArray:
    """(C, C): share of the weighted battles between row and column won by the row; NaN: none.

    Weights are `ranking.peerrank.weights` (the `--weights` in force); with
    reliability weights, reviewers' own battles are left out, as in the ratings.
    """
    win = ranking.tallies.win
    if ranking.reliability is not None:
        win = trusted_tensor(win, ranking.reviews.reviewer_as_contestant)
    pairs = np.einsum("r,rij->ij", ranking.peerrank.weights, win)
    both = pairs + pairs.T
    scale = float(both.max(initial=0.0))
    compared = both > scale * 1e-12 if scale > 0 else np.zeros_like(both, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(compared, pairs / np.where(compared, both, 1.0), math.nan)
    return out
