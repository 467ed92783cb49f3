"""Win rates against one baseline model (AlpacaEval's and arena-hard's headline figure).

For every battle between a model m and the baseline, m's share of the win is
`p_a` when m was shown first and `1 - p_a` otherwise (a plain verdict: 1, 1/2
or 0). The win rate is the weighted mean of that share, the discrete win rate
the weighted mean of 1 / 1/2 / 0 by the plain verdict (AlpacaEval's
`discrete_win_rate`: wins plus half the draws over the battles). The interval
is the 2.5 / 97.5 percentiles of the win rate over a bootstrap of questions.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import bootstrap_counts
from arena.rank._encode import ReviewSet

__all__ = ["BaselineRate", "baseline_win_rates"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class BaselineRate:
    """One model's record against the baseline (fractions in [0, 1]; NaN: no battle)."""

    model: str
    win_rate: float
    discrete_win_rate: float
    ci_low: float
    ci_high: float
    n: int  # battles against the baseline
    avg_length: float  # mean length of its answers there (characters), NaN when unknown


def _per_question(
    model: NDArray[np.int64],
    question: NDArray[np.int64],
    values: FloatArray,
    shape: tuple[int, int],
) -> FloatArray:
    flat = np.bincount(model * shape[1] + question, weights=values, minlength=shape[0] * shape[1])
    out: FloatArray = flat.astype(np.float64).reshape(shape)
    return out


def baseline_win_rates(
    rs: ReviewSet, baseline: str, *, bootstrap: int = 200, seed: int = 0
) -> list[BaselineRate]:
    """Each contestant's win rate against `baseline` (in contestant order, baseline left out)."""
    if baseline not in rs.contestants:
        raise ValueError(f"baseline model {baseline!r} is not a contestant")
    base = rs.contestants.index(baseline)
    c, q = rs.n_models, rs.n_questions
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    involved = (a == base) | (b == base)
    first = a[involved] != base  # the other model was shown first
    other = np.where(first, a[involved], b[involved])
    score = rs.score[involved].astype(np.float64)
    p_a = (1.0 - score) / 2.0 if rs.p_a is None else rs.p_a[involved]
    weight = np.ones(other.shape[0]) if rs.weight is None else rs.weight[involved]
    share = np.where(first, p_a, 1.0 - p_a)
    plain = np.where(first, (1.0 - score) / 2.0, (1.0 + score) / 2.0)
    question = rs.question[involved].astype(np.int64)
    won = _per_question(other, question, weight * share, (c, q))
    played = _per_question(other, question, weight, (c, q))
    discrete = np.bincount(other, weights=weight * plain, minlength=c)
    n = np.bincount(other, minlength=c)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = won.sum(axis=1) / played.sum(axis=1)
        discrete_rate = discrete / played.sum(axis=1)
    low, high = np.full(c, np.nan), np.full(c, np.nan)
    if bootstrap > 0 and q >= 2:
        draws = bootstrap_counts(q, bootstrap, seed)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model without battles: NaN
            rounds = (draws @ won.T) / (draws @ played.T)
            low, high = np.nanpercentile(rounds, [2.5, 97.5], axis=0)
    lengths = _lengths(rs, involved, first, other, question, (c, q))
    return [
        BaselineRate(
            model=name,
            win_rate=float(rate[i]),
            discrete_win_rate=float(discrete_rate[i]),
            ci_low=float(low[i]),
            ci_high=float(high[i]),
            n=int(n[i]),
            avg_length=float(lengths[i]),
        )
        for i, name in enumerate(rs.contestants)
        if i != base
    ]


def _lengths(
    rs: ReviewSet,
    involved: NDArray[np.bool_],
    first: NDArray[np.bool_],
    other: NDArray[np.int64],
    question: NDArray[np.int64],
    shape: tuple[int, int],
) -> FloatArray:
    """Per model: the mean over questions of its answer's length (each answer once)."""
    if rs.style_a is None or rs.style_b is None or "length" not in rs.style_names:
        return np.full(shape[0], np.nan)
    k = rs.style_names.index("length")
    length = np.where(first, rs.style_a[involved, k], rs.style_b[involved, k])
    known = np.isfinite(length)
    total = _per_question(other[known], question[known], length[known], shape)
    count = _per_question(other[known], question[known], np.ones(int(known.sum())), shape)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # no length known: NaN
        per_question = total / count  # one answer per (model, question), however often judged
        out: FloatArray = np.nanmean(np.where(count > 0, per_question, np.nan), axis=1)
    return out
