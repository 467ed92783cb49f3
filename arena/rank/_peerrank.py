"""PeerRank weighted win rates (PRD paper, Algorithm 2) and plain win counts.

The arithmetic is the published one: a review's win value is 1 / 0.5 / 0 for a
win / tie / loss; a contestant's score is the sum of its win values, each times
its reviewer's mean-normalised weight, divided by the unweighted number of its
battles. New reviewer weights are the reviewers' own scores min-max scaled to
[0, 1] and divided by their sum; a reviewer that does not compete gets the mean
weight of the others. See docs/ranking.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import A_WINS, B_WINS, TIE, Tallies

__all__ = [
    "PeerRankBatch",
    "PeerRankResult",
    "WinCounts",
    "peerrank",
    "peerrank_batch",
    "weights_from_scores",
    "win_counts",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Scores closer than this count as equal (the "max == min" case).
_EQUAL_SPAN = 1e-12


@dataclass(frozen=True, eq=False)
class WinCounts:
    """Unweighted wins, ties and losses of each contestant."""

    wins: IntArray
    ties: IntArray
    losses: IntArray

    @property
    def battles(self) -> IntArray:
        """Counted battles of each contestant."""
        return self.wins + self.ties + self.losses


def win_counts(tallies: Tallies) -> WinCounts:
    """Wins, ties and losses per contestant, every counted review once."""
    pair = tallies.count.sum(axis=0)  # (C, C, 3): a vs b by verdict
    wins = pair[:, :, A_WINS].sum(axis=1) + pair[:, :, B_WINS].sum(axis=0)
    losses = pair[:, :, B_WINS].sum(axis=1) + pair[:, :, A_WINS].sum(axis=0)
    ties = pair[:, :, TIE].sum(axis=1) + pair[:, :, TIE].sum(axis=0)
    as_int = np.rint(np.stack([wins, ties, losses])).astype(np.int64)
    return WinCounts(as_int[0], as_int[1], as_int[2])


def weights_from_scores(scores: FloatArray, as_contestant: IntArray) -> FloatArray:
    """Reviewer weights (summing to 1) from contestant scores, one row per data set.

    `scores` is (sets, contestants) with NaN for a contestant without battles;
    such a contestant, and a reviewer that does not compete, has no score and
    gets the mean weight of the reviewers that have one.
    """
    sets = scores.shape[0]
    n_reviewers = as_contestant.shape[0]
    own = np.full((sets, n_reviewers), np.nan)
    competes = as_contestant >= 0
    own[:, competes] = scores[:, as_contestant[competes]]
    has = ~np.isnan(own)
    n_has = has.sum(axis=1)
    low = np.where(has, own, np.inf).min(axis=1, initial=np.inf)
    high = np.where(has, own, -np.inf).max(axis=1, initial=-np.inf)
    span = high - low
    equal = (n_has == 0) | ~(span > _EQUAL_SPAN)
    safe_span = np.where(equal, 1.0, span)
    scaled = np.where(has, (own - low[:, None]) / safe_span[:, None], 0.0)
    total = scaled.sum(axis=1)
    equal |= ~(total > 0)
    scaled /= np.where(equal, 1.0, total)[:, None]
    mean_of_others = np.where(n_has > 0, 1.0 / np.maximum(n_has, 1), 0.0)
    weights = np.where(has, scaled, mean_of_others[:, None])
    sums = weights.sum(axis=1, keepdims=True)
    weights /= np.where(sums > 0, sums, 1.0)
    weights[equal] = 1.0 / max(n_reviewers, 1)
    return weights


def _scores(value: FloatArray, battles: FloatArray, weights: FloatArray) -> FloatArray:
    """Weighted win rate per contestant: sum_r w~_r value[r, c] / battles[c]."""
    mean_normalised = weights * weights.shape[1]
    total = np.einsum("br,brc->bc", mean_normalised, value)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(battles > 0, total / np.where(battles > 0, battles, 1.0), np.nan)


def _value_and_battles(tensors: FloatArray) -> tuple[FloatArray, FloatArray]:
    """From win tensors (sets, R, C, C): win value per (reviewer, contestant) and battles."""
    value = tensors.sum(axis=3)  # (sets, R, C): win value of c in r's reviews
    # Every battle of c carries win value 1 in total, split between c and its opponent.
    battles = value.sum(axis=1) + tensors.sum(axis=2).sum(axis=1)
    return value, battles


@dataclass(frozen=True, eq=False)
class PeerRankBatch:
    """The fixed point of several data sets at once (e.g. bootstrap rounds)."""

    scores: FloatArray  # (sets, contestants); NaN without battles
    weights: FloatArray  # (sets, reviewers), each row sums to 1
    iterations: IntArray  # (sets,)
    converged: NDArray[np.bool_]  # (sets,)


def peerrank_batch(
    tensors: FloatArray,
    as_contestant: IntArray,
    *,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> PeerRankBatch:
    """PeerRank fixed point for a stack of win tensors (sets, R, C, C)."""
    sets, n_reviewers = tensors.shape[0], tensors.shape[1]
    value, battles = _value_and_battles(tensors)
    weights = np.full((sets, n_reviewers), 1.0 / max(n_reviewers, 1))
    iterations = np.zeros(sets, dtype=np.int64)
    converged = np.zeros(sets, dtype=bool)
    active = np.arange(sets)
    for iteration in range(1, max_iter + 1):
        if active.size == 0:
            break
        scores = _scores(value[active], battles[active], weights[active])
        new = weights_from_scores(scores, as_contestant)
        moved = np.abs(new - weights[active]).max(axis=1, initial=0.0)
        weights[active] = new
        iterations[active] = iteration
        done = moved < tol
        converged[active[done]] = True
        active = active[~done]
    return PeerRankBatch(_scores(value, battles, weights), weights, iterations, converged)


@dataclass(frozen=True, eq=False)
class PeerRankResult:
    """Plain and PeerRank-weighted win rates with the reviewer weights."""

    win_rate: FloatArray  # equal weights (the paper's "All"); NaN without battles
    weighted_win_rate: FloatArray  # at the fixed point ("All (Weighted)")
    weights: FloatArray  # per reviewer, sum 1
    iterations: int
    converged: bool


def peerrank(tallies: Tallies, *, tol: float = 1e-9, max_iter: int = 100) -> PeerRankResult:
    """Win rates and the PeerRank weighted-win-rate fixed point of one review set."""
    rs = tallies.reviews
    tensor = tallies.win[None]
    batch = peerrank_batch(tensor, rs.reviewer_as_contestant, tol=tol, max_iter=max_iter)
    value, battles = _value_and_battles(tensor)
    equal = np.full((1, rs.n_reviewers), 1.0 / max(rs.n_reviewers, 1))
    return PeerRankResult(
        win_rate=_scores(value, battles, equal)[0],
        weighted_win_rate=batch.scores[0],
        weights=batch.weights[0],
        iterations=int(batch.iterations[0]),
        converged=bool(batch.converged[0]),
    )
