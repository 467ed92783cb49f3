"""Judge diagnostics: position bias, swap consistency, self-preference, agreement.

All shares are NaN when their denominator is empty (rendered as null / "-").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import A_WINS, TIE, Tallies

__all__ = [
    "ReviewerDiagnostics",
    "fleiss_kappa",
    "pairwise_win_rates",
    "reviewer_diagnostics",
    "reviewer_fleiss_kappa",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


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


def reviewer_diagnostics(tallies: Tallies, weights: FloatArray) -> list[ReviewerDiagnostics]:
    """Per-reviewer diagnostics; `weights` (one per reviewer) sum to 1."""
    rs = tallies.reviews
    verdicts = tallies.count.sum(axis=(1, 2))  # (R, 3)
    counted = verdicts.sum(axis=1)
    ties = verdicts[:, TIE]
    position_a = _share(verdicts[:, A_WINS], counted - ties)
    tie_rate = _share(ties, counted)
    invalid_rate = _share(
        rs.invalid_per_reviewer.astype(np.float64), rs.answered_per_reviewer.astype(np.float64)
    )
    swap = _share(tallies.swap_agreed, tallies.swap_judged)
    self_pref = _self_preference(tallies.win, rs.reviewer_as_contestant)
    return [
        ReviewerDiagnostics(
            reviewer=name,
            position_a_share=float(position_a[i]),
            swap_consistency=float(swap[i]),
            self_preference=float(self_pref[i]),
            tie_rate=float(tie_rate[i]),
            invalid_rate=float(invalid_rate[i]),
            weight=float(weights[i]),
            battles=int(round(counted[i])),
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


def reviewer_fleiss_kappa(tallies: Tallies) -> float:
    """Fleiss' kappa between reviewers over the verdicts (A, B, tie) of each battle."""
    if tallies.fleiss_subjects == 0:
        return float("nan")
    observed = tallies.fleiss_agreement / tallies.fleiss_subjects
    shares = tallies.fleiss_totals / tallies.fleiss_totals.sum()
    chance = float((shares**2).sum())
    if chance >= 1.0:
        return float("nan")
    return (observed - chance) / (1.0 - chance)
