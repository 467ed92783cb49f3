"""Ranks within connected groups, rank intervals and neighbour tests from a bootstrap.

Ranks follow Chatbot Arena's conventions: ratings within 1e-9 of each other
share a rank (competition ranking, 1, 1, 3); a model's rank interval runs
from 1 + the number of models whose rating interval lies entirely above its
own, to the number of models whose interval does not lie entirely below its
own (itself included). Models are ranked only against the models of their
own connected part of the comparison graph; a model without battles is
unranked (rank 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._sandwich import neighbour_shares

__all__ = ["RANK_TIE_TOLERANCE", "NeighbourTest", "RankTable", "rank_models"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Ratings closer than this (relative, at least absolute) are tied.
RANK_TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class NeighbourTest:
    """Two models adjacent in the ranking and how sure the bootstrap is of their order."""

    upper: int
    lower: int
    share: float  # bootstrap rounds where upper beats lower (ties half); NaN without
    separated: bool  # their 95% intervals do not overlap


@dataclass(frozen=True, eq=False)
class RankTable:
    """Ranks of every model (0 = unranked) with intervals (0 = unknown)."""

    rank: IntArray
    rank_low: IntArray  # best (smallest) rank number the intervals allow
    rank_high: IntArray  # worst (largest) rank number
    group: IntArray  # index of the model's connected part; -1 when unranked
    order: list[int]  # models in leaderboard order: by group, then rank; unranked last
    neighbours: list[NeighbourTest]


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= RANK_TIE_TOLERANCE * max(1.0, abs(a), abs(b))


def rank_models(
    rating: FloatArray,
    ci_low: FloatArray,
    ci_high: FloatArray,
    components: Sequence[Sequence[int]],
    boot_rating: FloatArray | None = None,
    *,
    tiebreak: FloatArray | None = None,
    names: Sequence[str] | None = None,
    covariance: FloatArray | None = None,
) -> RankTable:
    """Rank `rating` within each of `components` (lists of model indices).

    A part of one model, or a model with a NaN rating, is unranked. Within a
    part, models are listed by rating, then `tiebreak` (higher first), then
    name; tied ratings share the rank. Parts are listed largest first (then by
    their first model). `boot_rating` (rounds, C) gives the neighbour shares;
    `covariance` (C, C), when given instead, gives them under the normal
    approximation, `Phi(gap / sd(gap))`.
    """
    c = rating.shape[0]
    rank = np.zeros(c, dtype=np.int64)
    rank_low = np.zeros(c, dtype=np.int64)
    rank_high = np.zeros(c, dtype=np.int64)
    group = np.full(c, -1, dtype=np.int64)
    label = list(names) if names is not None else [f"{i:09d}" for i in range(c)]
    second = np.zeros(c) if tiebreak is None else np.nan_to_num(tiebreak, nan=-np.inf)
    parts = sorted(
        (
            [i for i in part if not np.isnan(rating[i])]
            for part in components
            if sum(1 for i in part if not np.isnan(rating[i])) >= 2
        ),
        key=lambda p: (-len(p), p[0]),
    )
    order: list[int] = []
    neighbours: list[NeighbourTest] = []
    for index, part in enumerate(parts):
        members = sorted(part, key=lambda i: (-rating[i], -second[i], label[i]))
        for position, i in enumerate(members):
            group[i] = index
            if position and _tied(rating[i], rating[members[position - 1]]):
                rank[i] = rank[members[position - 1]]
            else:
                rank[i] = position + 1
        low, high = ci_low[members], ci_high[members]
        if not (np.isnan(low).any() or np.isnan(high).any()):
            for k, i in enumerate(members):
                rank_low[i] = 1 + int(np.sum(low > high[k]))
                rank_high[i] = int(np.sum(~(high < low[k])))
        for upper, lower in zip(members, members[1:], strict=False):
            share = float("nan")
            if covariance is not None:
                share = float(neighbour_shares(rating, covariance, [upper, lower])[0])
            elif boot_rating is not None and boot_rating.shape[0]:
                a, b = boot_rating[:, upper], boot_rating[:, lower]
                share = float(np.mean((a > b) + 0.5 * (a == b)))
            separated = bool(ci_low[upper] > ci_high[lower])
            neighbours.append(NeighbourTest(upper, lower, share, separated))
        order += members
    rest = sorted(
        (i for i in range(c) if group[i] < 0),
        key=lambda i: (np.isnan(rating[i]), -np.nan_to_num(rating[i]), label[i]),
    )
    return RankTable(rank, rank_low, rank_high, group, order + rest, neighbours)
