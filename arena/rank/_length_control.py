"""Length-controlled win rates against one baseline model (`--length-control`).

The default (`length_terms="per-model"`) fits every model on its own battles
with the baseline, so a model's figure does not depend on which other models
were imported (AlpacaEval's design). Each battle of m against the baseline on
question q is a logistic observation of m's share of the win y (graded
verdicts as given, weighted by the battle's weight):

    logit P(m beats the baseline on q) = theta_m + phi_m * tanh(delta / s_m)

delta = length(m's answer) - length(the baseline's answer) in characters and
s_m the standard deviation of delta over m's battles. phi_m, the judge's
preference for length as m's answers vary, has a N(LENGTH_PRIOR_MEAN,
LENGTH_PRIOR_SD^2) prior: one model's battles alone hardly separate it from
theta_m when m's answers are nearly all longer (or shorter) than the
baseline's, which AlpacaEval resolves with annotations of padded and
shortened copies of its baseline. The prior's mean and width were chosen on
AlpacaEval 2.0's own annotations (docs/anchors.md); theta_m has a wide
N(0, THETA_PRIOR_SD^2) prior that only keeps a model that won (or lost) every
battle finite. The fit is a few Newton steps on the two parameters.

    lc_win_rate(m) = sigmoid(theta_m)

the predicted win rate at the baseline's length (tanh term 0). The interval:
the 2.5 / 97.5 percentiles over `bootstrap` resamples of the questions, each
round refitted (the point estimate is the full data's fit, whatever the
rounds).

`length_terms="shared"` fits every model at once, with one length coefficient
for all and a difficulty per question shared by the models (d_q, with a
N(0, DIFFICULTY_PRIOR_SD^2) prior): `theta_m - d_q + phi * tanh(delta / s)`,
s over all the battles, reported as mean_q sigmoid(theta_m - d_q). Its
figures move when models are added or removed (the difficulties and phi are
learned from all of them).
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
    "LENGTH_PRIOR_MEAN",
    "LENGTH_PRIOR_SD",
    "LENGTH_TERMS",
    "LengthControl",
    "LengthControlled",
    "length_controlled_win_rates",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Each model fitted alone (the default), or all together with shared terms.
LENGTH_TERMS = ("per-model", "shared")
# The per-model fit's prior on the length coefficient phi_m (logits per unit of
# tanh(delta / s_m)) and on the strength theta_m.
LENGTH_PRIOR_MEAN = 1.0
LENGTH_PRIOR_SD = 0.1
THETA_PRIOR_SD = 10.0
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
    length_sd: float = float("nan")  # s_m (per-model fits; the shared s otherwise)


@dataclass(frozen=True)
class LengthControl:
    """The fit: per-model rates (contestant order, baseline left out) and its settings."""

    baseline: str
    rates: list[LengthControlled]
    length_terms: str
    # s: the standard deviation of the length difference over all the battles with the
    # baseline (characters; each model's own s_m is in its rate, per-model fits).
    length_sd: float
    bootstrap: int


@dataclass(frozen=True)
class _Battles:
    model: IntArray  # contestant code of the non-baseline side
    question: IntArray
    share: FloatArray  # the model's share of the win
    weight: FloatArray
    length: FloatArray  # tanh(delta / s)
    n: IntArray  # per contestant: the battles pooled into these rows


def _length_index(rs: ReviewSet) -> int:
    if rs.style_a is None or rs.style_b is None or "length" not in rs.style_names:
        raise ValueError(
            "--length-control needs the answers' lengths (answer texts or length_a / "
            "length_b columns); these reviews carry none"
        )
    return rs.style_names.index("length")


def _battles(rs: ReviewSet, base: int) -> tuple[_Battles, float]:
    k = _length_index(rs)
    assert rs.style_a is not None and rs.style_b is not None
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


def _newton(
    x: FloatArray, share: FloatArray, weight: FloatArray, start: FloatArray | None = None
) -> FloatArray:
    """(theta, phi) of the per-model fit for each row of `weight` (rounds, n): Newton
    steps on the penalised log-likelihood (concave), all rounds at once."""
    rounds = weight.shape[0]
    coef = np.zeros((rounds, 2)) if start is None else np.tile(start, (rounds, 1))
    if start is None:
        coef[:, 1] = LENGTH_PRIOR_MEAN
    prior = np.array([1.0 / THETA_PRIOR_SD**2, 1.0 / LENGTH_PRIOR_SD**2])
    mean = np.array([0.0, LENGTH_PRIOR_MEAN])
    for _ in range(100):
        z = coef[:, :1] + coef[:, 1:] * x[None, :]
        p = 1.0 / (1.0 + np.exp(-z))
        r = weight * (share[None, :] - p)
        v = weight * p * (1.0 - p)
        grad = np.stack([r.sum(axis=1), (r * x).sum(axis=1)], axis=1) - prior * (coef - mean)
        h00 = v.sum(axis=1) + prior[0]
        h01 = (v * x).sum(axis=1)
        h11 = (v * x * x).sum(axis=1) + prior[1]
        det = h00 * h11 - h01 * h01
        step = np.stack(
            [
                (h11 * grad[:, 0] - h01 * grad[:, 1]) / det,
                (h00 * grad[:, 1] - h01 * grad[:, 0]) / det,
            ],
            axis=1,
        )
        step = np.clip(step, -5.0, 5.0)  # far from the optimum (a model that won everything)
        coef = coef + step
        if float(np.abs(step).max()) < 1e-10:
            break
    return coef


def _per_model(
    rs: ReviewSet, base: int, bootstrap: int, seed: int
) -> tuple[list[LengthControlled], float]:
    """Each model fitted on its own battles with the baseline (module docstring)."""
    k = _length_index(rs)
    assert rs.style_a is not None and rs.style_b is not None
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    first = a != base
    score = rs.score.astype(np.float64)
    p_a = (1.0 - score) / 2.0 if rs.p_a is None else rs.p_a
    weight = np.ones(rs.n_battles) if rs.weight is None else rs.weight
    delta = np.where(
        first, rs.style_a[:, k] - rs.style_b[:, k], rs.style_b[:, k] - rs.style_a[:, k]
    )
    keep = ((a == base) | (b == base)) & (a != b) & np.isfinite(delta) & (weight > 0)
    if not keep.any():
        raise ValueError(
            "--length-control needs battles against the baseline with both answers' "
            "lengths known; there are none"
        )
    model = np.where(first, a, b)[keep]
    question = rs.question.astype(np.int64)[keep]
    share = np.where(first, p_a, 1.0 - p_a)[keep].astype(np.float64)
    w = weight[keep].astype(np.float64)
    delta = delta[keep]
    overall = float(np.std(delta, ddof=1)) if delta.size > 1 else 0.0
    draws = (
        bootstrap_counts(rs.n_questions, bootstrap, seed).astype(np.float64)
        if bootstrap > 0 and rs.n_questions >= 2
        else None
    )
    out: list[LengthControlled] = []
    for i, name in enumerate(rs.contestants):
        if i == base:
            continue
        rows = model == i
        n = int(rows.sum())
        if n == 0:
            nan = float("nan")
            out.append(LengthControlled(name, nan, nan, nan, nan, 0, nan))
            continue
        d = delta[rows]
        sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
        x = np.tanh(d / sd) if sd > 0 and np.isfinite(sd) else np.zeros(n)
        coef = _newton(x, share[rows], w[rows][None, :])[0]
        low = high = float("nan")
        if draws is not None:
            refits = _newton(x, share[rows], w[rows][None, :] * draws[:, question[rows]], coef)
            rates = 1.0 / (1.0 + np.exp(-refits[:, 0]))
            low, high = (float(v) for v in np.percentile(rates, [2.5, 97.5]))
        rate = float(1.0 / (1.0 + np.exp(-coef[0])))
        out.append(LengthControlled(name, rate, low, high, float(coef[1]), n, sd))
    return out, overall


def length_controlled_win_rates(
    rs: ReviewSet,
    baseline: str,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    length_terms: str = "per-model",
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
    if length_terms == "per-model":
        rates, overall = _per_model(rs, base, bootstrap, seed)
        return LengthControl(
            baseline=baseline,
            rates=rates,
            length_terms=length_terms,
            length_sd=overall,
            bootstrap=bootstrap,
        )
    c, q = rs.n_models, rs.n_questions
    per_model = False
    n_length = 1
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
            length_sd=sd,
        )
        for i, name in enumerate(rs.contestants)
        if i != base
    ]
    return LengthControl(
        baseline=baseline, rates=rates, length_terms=length_terms, length_sd=sd, bootstrap=bootstrap
    )
