"""Length-controlled win rates against one baseline model (`--length-control`).

Every battle between a contestant m and the baseline on question q is one
logistic observation of m's share of the win y (graded verdicts as given,
weighted by the battle's weight):

    logit P(m beats the baseline on q) = theta_m - d_q + phi_m * tanh(delta / s)

theta_m is m's strength, d_q the question's difficulty (shared by every
contestant), delta = length(m's answer) - length(the baseline's answer) and s
the standard deviation of delta over all the battles with the baseline. With
`length_terms="shared"` (the default) phi_m = phi for every model: the
preference for longer answers is the judge's, and a single coefficient is
identified from every model's within-model spread of lengths, where a
per-model one (`"per-model"`, AlpacaEval's choice) is confounded with
theta_m for a model whose answers are almost all longer (or shorter) than
the baseline's. The fit is scikit-learn's L2-regularised LogisticRegression
(newton-cg): the question difficulties get a N(0, DIFFICULTY_PRIOR_SD^2) prior,
which keeps a question every model won (or lost) finite; the strengths and
length coefficients are all but unpenalised (their columns are scaled by
UNPENALISED_SCALE, so their prior sd is that factor larger).

The length-controlled win rate is the model's predicted win rate at the
baseline's length (tanh term 0), averaged over the questions it met the
baseline on: mean_q sigmoid(theta_m - d_q). With phi = 0 it reproduces the
raw win rate (the fit's score equation for theta_m). The interval is the
2.5 / 97.5 percentiles over a bootstrap of questions, each round refitted.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import bootstrap_counts
from arena.rank._encode import ReviewSet

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "DIFFICULTY_PRIOR_SD",
    "LENGTH_TERMS",
    "LengthControl",
    "LengthControlled",
    "length_controlled_win_rates",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# How the length term enters: one coefficient for every model, or one per model.
LENGTH_TERMS = ("shared", "per-model")
# Prior standard deviation (logits) of a question's difficulty.
DIFFICULTY_PRIOR_SD = 2.0
# Strength and length columns are multiplied by this: their L2 penalty is
# UNPENALISED_SCALE^2 times weaker than the difficulties'.
UNPENALISED_SCALE = 30.0


@dataclass(frozen=True)
class LengthControlled:
    """One model's length-controlled win rate against the baseline (fractions; NaN: none)."""

    model: str
    lc_win_rate: float
    lc_ci_low: float
    lc_ci_high: float
    length_coef: float  # phi_m (the shared phi when length_terms is "shared")
    n: int  # battles against the baseline with both lengths known


@dataclass(frozen=True)
class LengthControl:
    """The fit: per-model rates (contestant order, baseline left out) and its settings."""

    baseline: str
    rates: list[LengthControlled]
    length_terms: str
    length_sd: float  # s: the standard deviation of the length difference (characters)
    bootstrap: int


@dataclass(frozen=True)
class _Battles:
    model: IntArray  # contestant code of the non-baseline side
    question: IntArray
    share: FloatArray  # the model's share of the win
    weight: FloatArray
    length: FloatArray  # tanh(delta / s)
    n: IntArray  # per contestant: the battles pooled into these rows


def _battles(rs: ReviewSet, base: int) -> tuple[_Battles, float]:
    if rs.style_a is None or rs.style_b is None or "length" not in rs.style_names:
        raise ValueError(
            "--length-control needs the answers' lengths (answer texts or length_a / "
            "length_b columns); these reviews carry none"
        )
    k = rs.style_names.index("length")
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    involved = ((a == base) | (b == base)) & (a != b)
    first = a != base  # the model was shown first
    score = rs.score.astype(np.float64)
    p_a = (1.0 - score) / 2.0 if rs.p_a is None else rs.p_a
    weight = np.ones(rs.n_battles) if rs.weight is None else rs.weight
    length_model = np.where(first, rs.style_a[:, k], rs.style_b[:, k])
    length_base = np.where(first, rs.style_b[:, k], rs.style_a[:, k])
    delta = length_model - length_base
    keep = involved & np.isfinite(delta) & (weight > 0)
    if not keep.any():
        raise ValueError(
            "--length-control needs battles against the baseline with both answers' "
            "lengths known; there are none"
        )
    delta = delta[keep]
    sd = float(np.std(delta, ddof=1)) if delta.size > 1 else 0.0
    scaled = np.tanh(delta / sd) if sd > 0 and np.isfinite(sd) else np.zeros_like(delta)
    model = np.where(first, a, b)[keep]
    question = rs.question.astype(np.int64)[keep]
    w = weight[keep].astype(np.float64)
    won = w * np.where(first, p_a, 1.0 - p_a)[keep]
    # One row per (model, question, length difference): the reviewers and both
    # orders of one pair of answers pool into a weight and a mean share.
    key = np.stack([model.astype(np.float64), question.astype(np.float64), scaled], axis=1)
    unique, group = np.unique(key, axis=0, return_inverse=True)
    group = group.ravel()
    total = np.bincount(group, weights=w).astype(np.float64)
    battles = _Battles(
        model=unique[:, 0].astype(np.int64),
        question=unique[:, 1].astype(np.int64),
        share=np.bincount(group, weights=won) / total,
        weight=total,
        length=unique[:, 2],
        n=np.bincount(model, minlength=rs.n_models),
    )
    return battles, sd


def _design(
    battles: _Battles, n_models: int, n_questions: int, per_model: bool
) -> sparse.csr_matrix:
    """Columns: strengths (n_models), length (1 or n_models), difficulties (n_questions)."""
    n = battles.model.shape[0]
    rows = np.arange(n)
    n_length = n_models if per_model else 1
    length_col = n_models + (battles.model if per_model else np.zeros(n, dtype=np.int64))
    data = np.concatenate(
        [
            np.full(n, UNPENALISED_SCALE),
            UNPENALISED_SCALE * battles.length,
            -np.ones(n),  # the difficulty enters with a minus sign
        ]
    )
    cols = np.concatenate([battles.model, length_col, n_models + n_length + battles.question])
    shape = (n, n_models + n_length + n_questions)
    from scipy import sparse  # only for --length-control: a leaderboard without it skips scipy

    return sparse.csr_matrix((data, (np.tile(rows, 3), cols)), shape=shape)


def _fit(
    x: sparse.csr_matrix,
    battles: _Battles,
    row_weight: FloatArray,
    start: FloatArray | None,
) -> FloatArray:
    """Coefficients of the weighted logistic fit with fractional outcomes (rows doubled)."""
    from scipy import sparse
    from sklearn.linear_model import LogisticRegression

    stacked = sparse.vstack([x, x], format="csr")
    y = np.concatenate([np.ones(x.shape[0]), np.zeros(x.shape[0])])
    w = np.concatenate([row_weight * battles.share, row_weight * (1.0 - battles.share)])
    keep = w > 0
    model = LogisticRegression(
        C=DIFFICULTY_PRIOR_SD**2,
        fit_intercept=False,
        solver="newton-cg",
        max_iter=200,
        tol=1e-6,
        warm_start=start is not None,
    )
    if start is not None:
        model.coef_ = start.reshape(1, -1).copy()
        model.intercept_ = np.zeros(1)
    if np.unique(y[keep]).size < 2:  # every battle won (or lost): a weightless other class
        other = int(np.flatnonzero(y != y[keep][0])[0])
        keep[other] = True
        w[other] = 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a rare ConvergenceWarning: the rates are stable to 1e-4
        model.fit(stacked[keep], y[keep], sample_weight=w[keep])
    coef: FloatArray = model.coef_.ravel().astype(np.float64)
    return coef


def _predict(
    coef: FloatArray,
    pairs: IntArray,  # (model, question) played, one row each
    question_weight: FloatArray,  # per question (bootstrap multiplicity)
    n_models: int,
    n_length: int,
) -> FloatArray:
    theta = coef[:n_models] * UNPENALISED_SCALE
    difficulty = coef[n_models + n_length :]
    m, q = pairs[:, 0], pairs[:, 1]
    p = 1.0 / (1.0 + np.exp(-(theta[m] - difficulty[q])))
    w = question_weight[q]
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.bincount(m, weights=w * p, minlength=n_models) / np.bincount(
            m, weights=w, minlength=n_models
        )
    return out


def length_controlled_win_rates(
    rs: ReviewSet,
    baseline: str,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    length_terms: str = "shared",
) -> LengthControl:
    """Each contestant's length-controlled win rate against `baseline` (module docstring).

    Raises ValueError when `baseline` is not a contestant or the reviews carry
    no answer lengths.
    """
    if length_terms not in LENGTH_TERMS:
        raise ValueError(f"length_terms must be one of {LENGTH_TERMS}, not {length_terms!r}")
    if baseline not in rs.contestants:
        raise ValueError(f"baseline model {baseline!r} is not a contestant")
    base = rs.contestants.index(baseline)
    c, q = rs.n_models, rs.n_questions
    per_model = length_terms == "per-model"
    n_length = c if per_model else 1
    battles, sd = _battles(rs, base)
    x = _design(battles, c, q, per_model)
    pairs = np.unique(np.stack([battles.model, battles.question], axis=1), axis=0)
    coef = _fit(x, battles, battles.weight, None)
    rate = _predict(coef, pairs, np.ones(q), c, n_length)
    low, high = np.full(c, np.nan), np.full(c, np.nan)
    if bootstrap > 0 and q >= 2:
        draws = bootstrap_counts(q, bootstrap, seed).astype(np.float64)
        rounds = np.empty((bootstrap, c))
        for r in range(bootstrap):
            row_weight = battles.weight * draws[r, battles.question]
            refit = _fit(x, battles, row_weight, coef)
            rounds[r] = _predict(refit, pairs, draws[r], c, n_length)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model without battles: NaN
            low, high = np.nanpercentile(rounds, [2.5, 97.5], axis=0)
    phi = coef[c : c + n_length] * UNPENALISED_SCALE
    n = battles.n
    played = n > 0
    rates = [
        LengthControlled(
            model=name,
            lc_win_rate=float(rate[i]) if played[i] else float("nan"),
            lc_ci_low=float(low[i]) if played[i] else float("nan"),
            lc_ci_high=float(high[i]) if played[i] else float("nan"),
            length_coef=float(phi[i] if per_model else phi[0]) if played[i] else float("nan"),
            n=int(n[i]),
        )
        for i, name in enumerate(rs.contestants)
        if i != base
    ]
    return LengthControl(
        baseline=baseline, rates=rates, length_terms=length_terms, length_sd=sd, bootstrap=bootstrap
    )
