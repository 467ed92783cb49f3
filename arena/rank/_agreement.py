"""Agreement with human labels: per reviewer, of the weighted majority, and of rankings.

Battles are compared without regard to position: the label of a review is
"the lower-indexed model wins", "the other wins" or "tie". Several human labels
on one (question, pair) are merged by majority vote (a tie between the top
categories gives "tie"). The PeerRank-weighted majority does the same with
each reviewer's votes weighted by its weight.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import bootstrap_counts
from arena.rank._diagnostics import fleiss_kappa
from arena.rank._encode import ReviewSet

__all__ = [
    "Agreement",
    "AgreementScore",
    "RankCorrelation",
    "human_agreement",
    "kendall_tau",
    "rank_correlation",
    "spearman_rho",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_LOW_WINS, _HIGH_WINS, _TIE = 0, 1, 2


def _canonical(rs: ReviewSet, question_map: IntArray) -> tuple[IntArray, IntArray]:
    """(battle key in the shared question space, category) of each counted review."""
    c = rs.n_models
    low = np.minimum(rs.model_a, rs.model_b)
    high = np.maximum(rs.model_a, rs.model_b)
    winner_is_a = rs.score == -1
    winner = np.where(winner_is_a, rs.model_a, rs.model_b)
    category = np.where(rs.score == 0, _TIE, np.where(winner == low, _LOW_WINS, _HIGH_WINS))
    key = (question_map[rs.question] * c + low) * c + high
    return key.astype(np.int64), category.astype(np.int64)


# Vote totals closer than this (relative to the top total) are a tie at the top.
_VOTE_TOLERANCE = 1e-9


def _plurality(votes: FloatArray) -> IntArray:
    """Winning category per row of (battles x 3) vote totals; a tie at the top is 'tie'.

    Weighted totals are sums of floats, so "equal" means within a relative
    1e-9: rounding noise never decides a weighted majority.
    """
    top = votes.max(axis=1, keepdims=True)
    slack = _VOTE_TOLERANCE * np.maximum(np.abs(top), 1e-300)
    leaders = (votes >= top - slack).sum(axis=1)
    return np.where(leaders > 1, _TIE, votes.argmax(axis=1)).astype(np.int64)


@dataclass(frozen=True)
class AgreementScore:
    """Accuracy and Fleiss' kappa (two raters: the judge and the humans).

    `accuracy_low` / `accuracy_high`: 95% bootstrap interval of the accuracy
    over the labelled questions (NaN without a bootstrap or with under 2
    questions).
    """

    n: int
    accuracy: float
    kappa: float
    accuracy_low: float = float("nan")
    accuracy_high: float = float("nan")


@dataclass(frozen=True)
class RankCorrelation:
    """Kendall tau and Spearman rho of a ranking against a reference."""

    kendall_tau: float
    spearman: float


@dataclass(frozen=True)
class Agreement:
    """Everything `--human` reports."""

    battles: int  # (question, pair) with a human majority label
    reviewers: dict[str, AgreementScore]
    weighted_majority: AgreementScore
    human_win_rate: dict[str, float]
    rankings: dict[str, RankCorrelation]


def _score(
    judge: IntArray, human: IntArray, question: IntArray, draws: FloatArray | None
) -> AgreementScore:
    """Accuracy and kappa of `judge` against `human`; `draws` (rounds x questions) for the CI."""
    n = int(judge.size)
    if n == 0:
        return AgreementScore(0, float("nan"), float("nan"))
    table = np.zeros((n, 3), dtype=np.int64)
    rows = np.arange(n)
    np.add.at(table, (rows, judge), 1)
    np.add.at(table, (rows, human), 1)
    hits = judge == human
    low = high = float("nan")
    if draws is not None and draws.shape[1] >= 2:
        size = draws.shape[1]
        per_hits = np.bincount(question, weights=hits.astype(np.float64), minlength=size)
        per_n = np.bincount(question, minlength=size).astype(np.float64)
        judged = draws @ per_n
        rate = (draws @ per_hits)[judged > 0] / judged[judged > 0]
        if rate.size:
            low, high = (float(v) for v in np.percentile(rate, [2.5, 97.5]))
    return AgreementScore(n, float(np.mean(hits)), fleiss_kappa(table), low, high)


def kendall_tau(x: FloatArray, y: FloatArray) -> float:
    """Kendall's tau-b (ties handled as scipy does); NaN when either side is constant."""
    upper = np.triu_indices(x.size, k=1)
    sign_x = np.sign(x[:, None] - x[None, :])[upper]
    sign_y = np.sign(y[:, None] - y[None, :])[upper]
    denominator = np.sqrt(float(np.count_nonzero(sign_x)) * float(np.count_nonzero(sign_y)))
    if denominator == 0:
        return float("nan")
    return float(np.sum(sign_x * sign_y) / denominator)


def _average_ranks(values: FloatArray) -> FloatArray:
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts
    ranks: FloatArray = (first + (counts + 1) / 2.0)[inverse.ravel()]
    return ranks


def spearman_rho(x: FloatArray, y: FloatArray) -> float:
    """Spearman's rho: Pearson correlation of average ranks; NaN when either is constant."""
    rx, ry = _average_ranks(x), _average_ranks(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    denominator = float(np.sqrt(np.sum(dx * dx) * np.sum(dy * dy)))
    if denominator == 0:
        return float("nan")
    return float(np.sum(dx * dy) / denominator)


def rank_correlation(scores: FloatArray, reference: FloatArray) -> RankCorrelation:
    """Kendall tau-b and Spearman rho over the entries where both are finite."""
    keep = np.isfinite(scores) & np.isfinite(reference)
    if keep.sum() < 2:
        return RankCorrelation(float("nan"), float("nan"))
    x, y = scores[keep], reference[keep]
    return RankCorrelation(kendall_tau(x, y), spearman_rho(x, y))


def human_agreement(
    rs: ReviewSet,
    human: ReviewSet,
    weights: FloatArray,
    rankings: Mapping[str, FloatArray],
    *,
    bootstrap: int = 200,
    seed: int = 0,
) -> Agreement:
    """Compare reviewers, their weighted majority and rankings with human labels.

    `human` must be encoded against the same contestants as `rs`; `rankings`
    maps a name (e.g. "bt") to one score per contestant (higher is better).
    Accuracy intervals come from `bootstrap` rounds over the labelled
    questions (seeded by `seed`).
    """
    if human.contestants != rs.contestants:
        raise ValueError("human labels must be encoded against the same contestants")
    c = rs.n_models
    names = sorted(set(rs.questions) | set(human.questions))
    position = {name: i for i, name in enumerate(names)}
    own_map = np.array([position[q] for q in rs.questions], dtype=np.int64)
    human_map = np.array([position[q] for q in human.questions], dtype=np.int64)

    human_key, human_cat = _canonical(human, human_map)
    unique_keys, inverse = np.unique(human_key, return_inverse=True)
    votes = np.zeros((unique_keys.size, 3))
    np.add.at(votes, (inverse.ravel(), human_cat), 1.0)
    human_label = _plurality(votes)

    def lookup(keys: IntArray) -> IntArray:
        """Human majority label of each battle key, -1 where humans gave none."""
        if unique_keys.size == 0:
            return np.full(keys.size, -1, dtype=np.int64)
        where = np.clip(np.searchsorted(unique_keys, keys), 0, unique_keys.size - 1)
        return np.where(unique_keys[where] == keys, human_label[where], -1).astype(np.int64)

    # Bootstrap over the labelled questions (dense codes 0..L-1 of the shared space).
    labelled = np.unique(unique_keys // (c * c))
    dense = np.full(len(names), -1, dtype=np.int64)
    dense[labelled] = np.arange(labelled.size)
    draws = None
    if bootstrap > 0 and labelled.size >= 2:
        draws = bootstrap_counts(int(labelled.size), bootstrap, seed)

    key, category = _canonical(rs, own_map)
    truth = lookup(key)
    matched = truth >= 0
    asked = dense[key // (c * c)]
    per_reviewer: dict[str, AgreementScore] = {}
    for i, name in enumerate(rs.reviewers):
        mine = matched & (rs.reviewer == i)
        per_reviewer[name] = _score(category[mine], truth[mine], asked[mine], draws)

    judged_keys, judged_inverse = np.unique(key[matched], return_inverse=True)
    weighted = np.zeros((judged_keys.size, 3))
    np.add.at(
        weighted,
        (judged_inverse.ravel(), category[matched]),
        weights[rs.reviewer[matched]],
    )
    has_weight = weighted.sum(axis=1) > 0
    majority = _plurality(weighted)[has_weight]
    majority_truth = lookup(judged_keys[has_weight])

    win_value = np.where(human.score == 0, 0.5, (human.score == -1).astype(np.float64))
    won = np.bincount(human.model_a, weights=win_value, minlength=c) + np.bincount(
        human.model_b, weights=1.0 - win_value, minlength=c
    )
    played = np.bincount(human.model_a, minlength=c) + np.bincount(human.model_b, minlength=c)
    with np.errstate(invalid="ignore", divide="ignore"):
        human_rate = np.where(played > 0, won / np.where(played > 0, played, 1), np.nan)

    return Agreement(
        battles=int(unique_keys.size),
        reviewers=per_reviewer,
        weighted_majority=_score(
            majority, majority_truth, dense[judged_keys[has_weight] // (c * c)], draws
        ),
        human_win_rate={name: float(human_rate[i]) for i, name in enumerate(rs.contestants)},
        rankings={
            name: rank_correlation(np.asarray(v, dtype=np.float64), human_rate)
            for name, v in rankings.items()
        },
    )
