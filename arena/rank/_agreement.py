"""Agreement with human labels: per reviewer, of the weighted majority, and of rankings.

Battles are compared without regard to position: the label of a review is
"the lower-indexed model wins", "the other wins" or "tie". Several human labels
on one (question, pair) are merged by plurality (a tie between the top
categories gives "tie") or, PRD's convention, by the sign of their mean. The
reviewers' weighted majority is a weighted plurality per (question, pair), or,
PRD's convention, the sign (beyond 0.01) of the weighted mean score per
ordered battle. Fleiss' kappa codes the categories by model order or, PRD's
convention, by position (first answer wins, second wins, tie).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import bootstrap_counts
from arena.rank._diagnostics import fleiss_kappa
from arena.rank._encode import ReviewSet

__all__ = [
    "AGREEMENT_CONVENTIONS",
    "HUMAN_MERGES",
    "KAPPA_CATEGORIES",
    "MAJORITIES",
    "MAJORITY_EPSILON",
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

# How several human labels on one battle are merged: the most frequent category
# (a tie at the top gives "tie"), or the sign of the mean label (PRD).
HUMAN_MERGES = ("plurality", "mean-sign")
# The reviewers' weighted majority: a weighted plurality per (question, pair),
# both orders pooled, or the sign of the weighted mean score per ordered battle,
# beyond MAJORITY_EPSILON (PRD).
MAJORITIES = ("plurality", "ordered-mean")
MAJORITY_EPSILON = 0.01
# Fleiss' kappa categories: by model order (lower-coded model wins, the other,
# tie) or by position (first answer wins, second, tie: PRD).
KAPPA_CATEGORIES = ("model", "position")
# The named sets of conventions: arena's own and those of the PRD paper's code.
AGREEMENT_CONVENTIONS: dict[str, dict[str, str]] = {
    "arena": {"human_merge": "plurality", "majority": "plurality", "kappa_categories": "model"},
    "prd": {"human_merge": "mean-sign", "majority": "ordered-mean", "kappa_categories": "position"},
}


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
    # The conventions used (HUMAN_MERGES, MAJORITIES, KAPPA_CATEGORIES).
    human_merge: str = "plurality"
    majority: str = "plurality"
    kappa_categories: str = "model"


def _mean_sign(category: IntArray, inverse: IntArray, size: int) -> IntArray:
    """Per battle, the sign of the mean label (+1 lower-coded model wins, -1 the other, 0 tie)."""
    signed = np.where(category == _LOW_WINS, 1.0, np.where(category == _HIGH_WINS, -1.0, 0.0))
    total = np.bincount(inverse, weights=signed, minlength=size)  # integer sums: exact
    return np.where(total > 0, _LOW_WINS, np.where(total < 0, _HIGH_WINS, _TIE)).astype(np.int64)


def _by_position(category: IntArray, low_first: NDArray[np.bool_]) -> IntArray:
    """Model-order categories recoded by position: 0 first answer wins, 1 second, 2 tie."""
    swapped = np.where(category == _LOW_WINS, _HIGH_WINS, _LOW_WINS)
    return np.where((category == _TIE) | low_first, category, swapped).astype(np.int64)


def _score(
    judge: IntArray,
    human: IntArray,
    question: IntArray,
    draws: FloatArray | None,
    low_first: NDArray[np.bool_] | None = None,
) -> AgreementScore:
    """Accuracy and kappa of `judge` against `human`; `draws` (rounds x questions) for the CI.

    Categories are by model order; with `low_first` (per battle, whether the
    lower-coded model was shown first) kappa codes them by position instead.
    """
    n = int(judge.size)
    if n == 0:
        return AgreementScore(0, float("nan"), float("nan"))
    hits = judge == human
    if low_first is not None:
        judge, human = _by_position(judge, low_first), _by_position(human, low_first)
    table = np.zeros((n, 3), dtype=np.int64)
    rows = np.arange(n)
    np.add.at(table, (rows, judge), 1)
    np.add.at(table, (rows, human), 1)
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


def _check_convention(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


def human_agreement(
    rs: ReviewSet,
    human: ReviewSet,
    weights: FloatArray,
    rankings: Mapping[str, FloatArray],
    *,
    bootstrap: int = 200,
    seed: int = 0,
    human_merge: str = "plurality",
    majority: str = "plurality",
    kappa_categories: str = "model",
) -> Agreement:
    """Compare reviewers, their weighted majority and rankings with human labels.

    `human` must be encoded against the same contestants as `rs`; `rankings`
    maps a name (e.g. "bt") to one score per contestant (higher is better).
    Accuracy intervals come from `bootstrap` rounds over the labelled
    questions (seeded by `seed`). `human_merge` (HUMAN_MERGES), `majority`
    (MAJORITIES) and `kappa_categories` (KAPPA_CATEGORIES) choose the
    conventions; AGREEMENT_CONVENTIONS["prd"] are the PRD paper's.
    """
    if human.contestants != rs.contestants:
        raise ValueError("human labels must be encoded against the same contestants")
    _check_convention("human_merge", human_merge, HUMAN_MERGES)
    _check_convention("majority", majority, MAJORITIES)
    _check_convention("kappa_categories", kappa_categories, KAPPA_CATEGORIES)
    by_position = kappa_categories == "position"
    c = rs.n_models
    names = sorted(set(rs.questions) | set(human.questions))
    position = {name: i for i, name in enumerate(names)}
    own_map = np.array([position[q] for q in rs.questions], dtype=np.int64)
    human_map = np.array([position[q] for q in human.questions], dtype=np.int64)

    human_key, human_cat = _canonical(human, human_map)
    unique_keys, inverse = np.unique(human_key, return_inverse=True)
    if human_merge == "mean-sign":
        human_label = _mean_sign(human_cat, inverse.ravel(), int(unique_keys.size))
    else:
        votes = np.zeros((unique_keys.size, 3))
        np.add.at(votes, (inverse.ravel(), human_cat), 1.0)
        human_label = _plurality(votes)

    def lookup(keys: IntArray) -> IntArray:
        """Human label of each battle key, -1 where humans gave none."""
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
    low_first = rs.model_a < rs.model_b
    per_reviewer: dict[str, AgreementScore] = {}
    for i, name in enumerate(rs.reviewers):
        mine = matched & (rs.reviewer == i)
        per_reviewer[name] = _score(
            category[mine],
            truth[mine],
            asked[mine],
            draws,
            low_first[mine] if by_position else None,
        )

    if majority == "ordered-mean":
        weighted_majority = _ordered_majority(
            rs, own_map[rs.question], weights, matched, lookup, dense, draws, by_position
        )
    else:
        weighted_majority = _pooled_majority(
            key, category, rs, weights, matched, lookup, dense, draws
        )

    human_rate = _human_win_rates(human, human_map, merged=human_merge == "mean-sign")

    return Agreement(
        battles=int(unique_keys.size),
        reviewers=per_reviewer,
        weighted_majority=weighted_majority,
        human_win_rate={name: float(human_rate[i]) for i, name in enumerate(rs.contestants)},
        rankings={
            name: rank_correlation(np.asarray(v, dtype=np.float64), human_rate)
            for name, v in rankings.items()
        },
        human_merge=human_merge,
        majority=majority,
        kappa_categories=kappa_categories,
    )


def _human_win_rates(human: ReviewSet, question_map: IntArray, *, merged: bool) -> FloatArray:
    """Each model's win rate over the human labels (a tie half a win; NaN: no label).

    `merged` (PRD's convention, with `human_merge="mean-sign"`): the labels of one
    question and ordered pair (model A, model B) are first merged into one, the sign
    of their mean, and each merged battle counts once, as PRD's Table 3 computes its
    human column; otherwise every label counts.
    """
    c = human.n_models
    a, b, score = human.model_a, human.model_b, human.score.astype(np.float64)
    if merged and human.n_battles:
        key = (question_map[human.question] * c + a) * c + b
        unique_keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        total = np.bincount(inverse.ravel(), weights=score, minlength=unique_keys.size)
        a, b, score = a[first], b[first], np.sign(total)
    win_value = np.where(score == 0, 0.5, (score < 0).astype(np.float64))
    won = np.bincount(a, weights=win_value, minlength=c) + np.bincount(
        b, weights=1.0 - win_value, minlength=c
    )
    played = np.bincount(a, minlength=c) + np.bincount(b, minlength=c)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate: FloatArray = np.where(played > 0, won / np.where(played > 0, played, 1), np.nan)
    return rate


def _pooled_majority(
    key: IntArray,
    category: IntArray,
    rs: ReviewSet,
    weights: FloatArray,
    matched: NDArray[np.bool_],
    lookup: Callable[[IntArray], IntArray],
    dense: IntArray,
    draws: FloatArray | None,
) -> AgreementScore:
    """Weighted plurality per (question, pair), both orders pooled; kappa by model order.

    A pooled battle has no position, so its kappa codes categories by model
    order whatever `kappa_categories` says.
    """
    c = rs.n_models
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
    return _score(majority, majority_truth, dense[judged_keys[has_weight] // (c * c)], draws)


def _ordered_majority(
    rs: ReviewSet,
    question: IntArray,
    weights: FloatArray,
    matched: NDArray[np.bool_],
    lookup: Callable[[IntArray], IntArray],
    dense: IntArray,
    draws: FloatArray | None,
    by_position: bool,
) -> AgreementScore:
    """PRD's vote: per ordered battle, the sign of the weighted mean score beyond MAJORITY_EPSILON.

    `question` is each review's code in the shared question space. Battles
    whose voters all have weight 0 are skipped.
    """
    c = rs.n_models
    a = rs.model_a[matched].astype(np.int64)
    b = rs.model_b[matched].astype(np.int64)
    ordered = (question[matched] * c + a) * c + b
    keys, inverse = np.unique(ordered, return_inverse=True)
    inverse = inverse.ravel()
    w = weights[rs.reviewer[matched]]
    total = np.bincount(inverse, weights=w, minlength=keys.size)
    scored = np.bincount(
        inverse, weights=w * rs.score[matched].astype(np.float64), minlength=keys.size
    )
    has_weight = total > 0
    keys = keys[has_weight]
    mean = scored[has_weight] / total[has_weight]
    first, second = (keys // c) % c, keys % c
    low_first = first < second
    # By position (0 first wins, 1 second, 2 tie), then by model order.
    by_place = np.where(
        mean < -MAJORITY_EPSILON, _LOW_WINS, np.where(mean > MAJORITY_EPSILON, _HIGH_WINS, _TIE)
    ).astype(np.int64)
    vote = _by_position(by_place, low_first)  # the recoding is its own inverse
    q = keys // (c * c)
    truth = lookup((q * c + np.minimum(first, second)) * c + np.maximum(first, second))
    labelled = truth >= 0
    return _score(
        vote[labelled],
        truth[labelled],
        dense[q[labelled]],
        draws,
        low_first[labelled] if by_position else None,
    )
