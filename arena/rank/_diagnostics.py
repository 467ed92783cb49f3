"""Judge diagnostics: position bias, swap consistency, self-preference, agreement.

All shares are NaN when their denominator is empty (rendered as null / "-").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._encode import ReviewSet

__all__ = [
    "ReviewerDiagnostics",
    "fleiss_kappa",
    "group_codes",
    "pairwise_win_rates",
    "reviewer_diagnostics",
    "reviewer_fleiss_kappa",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Keys are used directly as group codes while the key space is at most this large.
_DENSE_KEYS = 4_000_000


def group_codes(keys: IntArray, space: int) -> tuple[IntArray, IntArray]:
    """Dense group codes for integer keys, and the key of each code."""
    if space <= max(_DENSE_KEYS, 4 * keys.size):
        return keys, np.arange(space, dtype=np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    return inverse.astype(np.int64).ravel(), unique.astype(np.int64)


def _share(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, numerator / safe, np.nan)


@dataclass(frozen=True)
class ReviewerDiagnostics:
    """How one reviewer judges (see docs/ranking.md for each definition)."""

    reviewer: str
    position_a_share: float
    swap_consistency: float
    self_preference: float
    tie_rate: float
    invalid_rate: float
    weight: float
    battles: int


def _swap_consistency(rs: ReviewSet) -> FloatArray:
    """Per reviewer: share of (question, pair) judged in both orders where they agree."""
    c, r = rs.n_models, rs.n_reviewers
    low = np.minimum(rs.model_a, rs.model_b)
    high = np.maximum(rs.model_a, rs.model_b)
    flipped = (rs.model_a > rs.model_b).astype(np.int64)
    # Score from the lower-indexed model's side: -1 it wins, +1 it loses.
    canonical = np.where(flipped == 1, -rs.score, rs.score).astype(np.float64)
    key = ((rs.question * r + rs.reviewer) * c + low) * c + high
    codes, group_key = group_codes(key, rs.n_questions * r * c * c)
    groups = group_key.size
    index = codes * 2 + flipped
    sums = np.bincount(index, weights=canonical, minlength=2 * groups).reshape(groups, 2)
    counts = np.bincount(index, minlength=2 * groups).reshape(groups, 2)
    both = (counts > 0).all(axis=1)
    agree = both & (np.sign(sums[:, 0]) == np.sign(sums[:, 1]))
    reviewer_of_group = (group_key // (c * c)) % max(r, 1)
    judged = np.bincount(reviewer_of_group[both], minlength=r).astype(np.float64)
    agreed = np.bincount(reviewer_of_group[agree], minlength=r).astype(np.float64)
    return _share(agreed, judged)


def _self_preference(tensor: FloatArray, as_contestant: IntArray) -> FloatArray:
    """Own win rate as judged by itself minus the same as judged by the others."""
    value = tensor.sum(axis=2)  # (R, C)
    battles = (tensor + np.swapaxes(tensor, 1, 2)).sum(axis=2)
    out = np.full(as_contestant.shape[0], np.nan)
    for reviewer, model in enumerate(as_contestant.tolist()):
        if model < 0:
            continue
        own_n = battles[reviewer, model]
        other_n = battles[:, model].sum() - own_n
        if own_n > 0 and other_n > 0:
            own = value[reviewer, model] / own_n
            other = (value[:, model].sum() - value[reviewer, model]) / other_n
            out[reviewer] = own - other
    return out


def reviewer_diagnostics(
    rs: ReviewSet, tensor: FloatArray, weights: FloatArray
) -> list[ReviewerDiagnostics]:
    """Per-reviewer diagnostics; `tensor` is `win_tensor(rs)`, `weights` sum to 1."""
    r = rs.n_reviewers
    counted = np.bincount(rs.reviewer, minlength=r).astype(np.float64)
    ties = np.bincount(rs.reviewer[rs.score == 0], minlength=r).astype(np.float64)
    for_a = np.bincount(rs.reviewer[rs.score == -1], minlength=r).astype(np.float64)
    position_a = _share(for_a, counted - ties)
    tie_rate = _share(ties, counted)
    invalid_rate = _share(
        rs.invalid_per_reviewer.astype(np.float64), rs.answered_per_reviewer.astype(np.float64)
    )
    swap = _swap_consistency(rs)
    self_pref = _self_preference(tensor, rs.reviewer_as_contestant)
    return [
        ReviewerDiagnostics(
            reviewer=name,
            position_a_share=float(position_a[i]),
            swap_consistency=float(swap[i]),
            self_preference=float(self_pref[i]),
            tie_rate=float(tie_rate[i]),
            invalid_rate=float(invalid_rate[i]),
            weight=float(weights[i]),
            battles=int(counted[i]),
        )
        for i, name in enumerate(rs.reviewers)
    ]


def pairwise_win_rates(tensor: FloatArray) -> FloatArray:
    """`P[i, j]`: share of i's battles against j that i won (tie half); NaN if none."""
    value = tensor.sum(axis=0)
    battles = value + value.T
    out = _share(value, battles)
    np.fill_diagonal(out, np.nan)
    return out


def fleiss_kappa(counts: NDArray[np.int64] | FloatArray) -> float:
    """Fleiss' kappa of a (subjects x categories) count matrix; subjects need 2+ ratings.

    Subjects may have different numbers of ratings (the per-subject agreement
    uses its own count); subjects with fewer than two are ignored.
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0:
        return float("nan")
    raters = table.sum(axis=1)
    table = table[raters >= 2]
    raters = raters[raters >= 2]
    if table.shape[0] == 0:
        return float("nan")
    agreement = ((table**2).sum(axis=1) - raters) / (raters * (raters - 1))
    observed = float(agreement.mean())
    shares = table.sum(axis=0) / raters.sum()
    chance = float((shares**2).sum())
    if chance >= 1.0:
        return float("nan")
    return (observed - chance) / (1.0 - chance)


def reviewer_fleiss_kappa(rs: ReviewSet) -> float:
    """Fleiss' kappa between reviewers over the verdicts (A, B, tie) of each battle."""
    c = rs.n_models
    key = (rs.question * c + rs.model_a) * c + rs.model_b
    codes, group_key = group_codes(key, rs.n_questions * c * c)
    category = np.where(rs.score == -1, 0, np.where(rs.score == 1, 1, 2)).astype(np.int64)
    flat = np.bincount(codes * 3 + category, minlength=3 * group_key.size)
    return fleiss_kappa(flat.reshape(group_key.size, 3))
