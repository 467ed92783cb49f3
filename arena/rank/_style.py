"""Style control: Bradley-Terry with answer-style covariates, and judges' length bias.

For each battle (answers A and B) and style feature `k` (length, markdown
headers, list items, bold spans), the normalised difference
`d_k = (x_k(A) - x_k(B)) / (x_k(A) + x_k(B))` (0 when both are 0) is divided
by its root mean square over the counted reviews (not centred, so a battle
between answers of the same style keeps `d = 0`). The model is

    logit P(A wins) = theta_A - theta_B + sum_k beta_k d_k

(ties half a win each way, each review weighted by its reviewer's
mean-normalised weight), fitted by Newton's method. The reviewer weights are
fitted jointly: the PeerRank rule applied to the controlled ratings (each
reviewer's own controlled rating, min-max scaled, normalised), iterated to a
fixed point with `solve_weights`. Reviews are grouped by (question, model A,
model B) first, so the cost grows with the number of answer pairs, not of
reviews. Intervals are cluster-robust sandwich intervals by question (the
default, as for plain Bradley-Terry: no Monte Carlo, so nothing moves with the
seed; `style_sandwich`), or come from the same bootstrap over questions as
plain Bradley-Terry, every round refitting weights, ratings and coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.rank._bt import (
    BASE_RATING,
    ELO_PER_NAT,
    VIRTUAL_TIE,
    _strongly_connected_each,
    comparison_components,
)
from arena.rank._encode import ReviewSet
from arena.rank._numeric import expit
from arena.rank._peerrank import solve_weights, weights_from_scores
from arena.rank._sandwich import Z_95

__all__ = [
    "STYLE_EFFECT_MIN",
    "StyleFit",
    "answer_style",
    "fit_style_control",
    "length_bias",
    "significant_features",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_NEWTON_TOL = 1e-10
_NEWTON_ITER = 60
# Newton steps per weight update in bootstrap rounds (see `_solve`).
_BOOT_NEWTON_STEPS = 1
_MAX_STEP = 2.0
# Keeps the Newton system solvable where zero-weight reviewers leave a part unlinked.
_RIDGE = 1e-9
# A weak prior on the coefficients (the likelihood is scaled to total weight 1):
# negligible where the data identify them, and it keeps them finite where a
# feature is confounded with the models (e.g. each model always writes alike).
_COEF_RIDGE = 1e-6
# Sets fitted together: bounds the (sets x groups) work arrays.
_CHUNK_CELLS = 2_000_000
# A style coefficient is an effect (a warning, and the default order style-controlled)
# when its 95% interval excludes 0 and it is at least this large, in log-odds per
# root-mean-square unit of its difference: a 0.1 log-odds nudge moves no order.
STYLE_EFFECT_MIN = 0.1

_HEADER = r"(?m)^[ \t]{0,3}#{1,6}[ \t]+\S"
_LIST_ITEM = r"(?m)^[ \t]*(?:[-*+]|[0-9]+[.)])[ \t]+\S"
_BOLD = r"\*\*[^*\n]+\*\*|__[^_\n]+__"
# Fenced code blocks (``` or ~~~, up to 3 spaces of indent), to the closing
# fence of the same kind or, unclosed, to the end (CommonMark): a `# comment`
# line inside one is code, not a header.
_FENCED = (
    r"(?ms)^[ \t]{0,3}```.*?(?:^[ \t]{0,3}```[^\n]*$|\z)"
    r"|^[ \t]{0,3}~~~.*?(?:^[ \t]{0,3}~~~[^\n]*$|\z)"
)


def answer_style(texts: pl.Series) -> pl.DataFrame:
    """Style counts of each text: `length` (characters), `headers`, `lists`, `bold`.

    Headers are markdown `#` lines, list items lines starting with `-`, `*`,
    `+` or `1.` / `1)`, bold spans `**...**` or `__...__`, all counted outside
    fenced code blocks (``` or ~~~); the length counts every character. A null
    text gives nulls.
    """
    text = texts.cast(pl.String)
    prose = pl.col("prose")
    # One frame, so that polars counts the three patterns side by side.
    return pl.DataFrame(
        {
            "length": text.str.len_chars().cast(pl.Float64),
            "prose": text.str.replace_all(_FENCED, ""),
        }
    ).select(
        "length",
        headers=prose.str.count_matches(_HEADER).cast(pl.Float64),
        lists=prose.str.count_matches(_LIST_ITEM).cast(pl.Float64),
        bold=prose.str.count_matches(_BOLD).cast(pl.Float64),
    )


def length_bias(rs: ReviewSet) -> FloatArray | None:
    """Per reviewer: share of its decisive verdicts won by the longer answer.

    Battles between answers of equal length are left out; NaN for a reviewer
    without such a verdict; None when the reviews carry no lengths.
    """
    if rs.style_a is None or rs.style_b is None or "length" not in rs.style_names:
        return None
    k = rs.style_names.index("length")
    la, lb = rs.style_a[:, k], rs.style_b[:, k]
    decisive = (rs.score != 0) & np.isfinite(la) & np.isfinite(lb) & (la != lb)
    longer_won = np.where(rs.score == -1, la > lb, lb > la) & decisive
    n = np.bincount(rs.reviewer[decisive], minlength=rs.n_reviewers).astype(np.float64)
    won = np.bincount(rs.reviewer[longer_won], minlength=rs.n_reviewers).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(n > 0, won / np.where(n > 0, n, 1.0), np.nan)
    return out


@dataclass(frozen=True, eq=False)
class StyleFit:
    """Style-controlled ratings, style coefficients and the jointly fitted weights.

    `coef[k]` is in log-odds per root-mean-square unit of `d_k` (`scale[k]`):
    positive means judges favour the answer with more of feature `k`.
    """

    features: tuple[str, ...]  # fitted features
    dropped: tuple[str, ...]  # features without any variation (not fitted)
    scale: FloatArray  # (K,) root mean square of each d_k
    coef: FloatArray  # (K,)
    coef_low: FloatArray
    coef_high: FloatArray
    rating: FloatArray  # (C,) controlled, Elo scale; NaN without battles
    ci_low: FloatArray
    ci_high: FloatArray
    boot_rating: FloatArray | None  # (rounds, C)
    weights: FloatArray  # (R,) reviewer weights at the joint fixed point
    iterations: int
    converged: bool
    damping: float
    components: list[list[int]]
    regularised: list[int]
    bootstrap_rounds: int
    # With sandwich intervals: the ratings' covariance (C, C) in Elo points squared
    # (NaN outside a fitted part and between parts); None with the bootstrap's.
    covariance: FloatArray | None = None


def significant_features(fit: StyleFit) -> list[int]:
    """Indices of the features whose coefficient is an effect: its 95% interval
    excludes 0 and its size is at least STYLE_EFFECT_MIN (none without intervals)."""
    out: list[int] = []
    for k in range(len(fit.features)):
        coef, low, high = fit.coef[k], fit.coef_low[k], fit.coef_high[k]
        if not (np.isfinite(low) and np.isfinite(high)) or abs(coef) < STYLE_EFFECT_MIN:
            continue
        if low > 0 or high < 0:
            out.append(k)
    return out


@dataclass(frozen=True, eq=False)
class _Groups:
    """Reviews grouped by answer pair: per group, win value and count per reviewer."""

    question: IntArray
    a: IntArray
    b: IntArray
    d: FloatArray  # (G, K) standardised
    value: FloatArray  # (G, R) win value of A
    count: FloatArray  # (G, R)
    c: int
    n_questions: int


def _differences(rs: ReviewSet) -> tuple[FloatArray, tuple[str, ...]]:
    assert rs.style_a is not None and rs.style_b is not None
    xa, xb = rs.style_a, rs.style_b
    # In place: a few (n, K) arrays fewer at once on a big log.
    total = xa + xb
    d = np.subtract(xa, xb)
    positive = total > 0
    total[~positive] = 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        d /= total
    d[~positive] = 0.0
    return d, rs.style_names


def _groups(rs: ReviewSet, d: FloatArray) -> _Groups:
    c, r = rs.n_models, rs.n_reviewers
    key = (rs.question.astype(np.int64) * c + rs.model_a) * c + rs.model_b
    space = rs.n_questions * c * c
    if space <= max(4 * key.size, 1 << 16):
        # `np.unique(key, return_inverse=True)` without its sort: the keys are dense.
        present = np.bincount(key, minlength=space) > 0
        index = (np.cumsum(present) - 1)[key]
        g = int(np.count_nonzero(present))
    else:
        uniq, index = np.unique(key, return_inverse=True)
        index = index.ravel()
        g = uniq.size
    # The style of one answer pair is one value: otherwise every review is its own group.
    counts = np.bincount(index, minlength=g).astype(np.float64)
    same = True
    for k in range(d.shape[1]):
        mean = np.bincount(index, weights=d[:, k], minlength=g) / counts
        if np.abs(d[:, k] - mean[index]).max(initial=0.0) > 1e-12:
            same = False
            break
    if not same:
        index = np.arange(rs.n_battles)
        g = rs.n_battles
        question, a, b, dg = rs.question.astype(np.int64), rs.model_a, rs.model_b, d
    else:
        first = np.zeros(g, dtype=np.int64)
        first[index[::-1]] = np.arange(index.size)[::-1]
        question = rs.question[first].astype(np.int64)
        a, b, dg = rs.model_a[first], rs.model_b[first], d[first]
    win = (1.0 - rs.score.astype(np.float64)) * 0.5
    cell = index.astype(np.int64) * r + rs.reviewer
    value = np.bincount(cell, weights=win, minlength=g * r).astype(np.float64).reshape(g, r)
    count: FloatArray = np.bincount(cell, minlength=g * r).astype(np.float64).reshape(g, r)
    return _Groups(
        question,
        a.astype(np.int64),
        b.astype(np.int64),
        dg,
        value,
        count,
        c,
        rs.n_questions,
    )


class _Fitter:
    """Newton fits of the style model for many sets (weights x question multiplicities)."""

    def __init__(self, groups: _Groups, components: list[list[int]]) -> None:
        self.groups = groups
        c = groups.c
        self.c = c
        self.k = groups.d.shape[1]
        self.components = components
        self.centring = np.zeros((c, c))
        for part in components:
            self.centring[np.ix_(part, part)] = 1.0
        self.scored = np.zeros(c, dtype=bool)
        for part in components:
            if len(part) > 1:
                self.scored[part] = True
        # Virtual ties: every compared pair of a part, used in sets whose part is broken.
        compared = np.zeros((c, c), dtype=bool)
        compared[groups.a, groups.b] = True
        compared |= compared.T
        self.compared = compared
        self.virtual = [
            np.argwhere(np.triu(compared[np.ix_(part, part)], k=1)) for part in components
        ]

    def totals(
        self, weights: FloatArray, mult: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Weighted win value and count per group (S, G) for mean-normalised `weights`
        (S, R), and each set's "beats" matrix (S, C, C)."""
        g = self.groups
        return _totals(weights, mult, g.value, g.count, g.question, g.a, g.b, self.c)

    def fit(
        self,
        weights: FloatArray,
        mult: FloatArray,
        start: FloatArray,
        newton_steps: int = _NEWTON_ITER,
    ) -> tuple[FloatArray, list[int]]:
        """Parameters (S, C + K) for each set, after at most `newton_steps` Newton
        steps from `start`; also the parts that needed virtual ties."""
        g = self.groups
        k = self.k
        won, played, beats = self.totals(weights, mult)
        a, b, d = g.a, g.b, g.d
        # Virtual ties where a set's "beats" digraph is not strongly connected in some part.
        extra_a, extra_b, extra_w = [], [], []
        regularised: list[int] = []
        for index, part in enumerate(self.components):
            if len(part) < 2:
                continue
            sub = beats[:, part][:, :, part]
            broken = ~_strongly_connected_each(sub, self.compared[np.ix_(part, part)])
            if not broken.any():
                continue
            regularised.append(index)
            members = np.asarray(part)
            for i, j in self.virtual[index]:
                extra_a.append(members[i])
                extra_b.append(members[j])
                extra_w.append(broken.astype(np.float64) * VIRTUAL_TIE)
        if extra_a:
            a = np.concatenate([a, np.asarray(extra_a, dtype=np.int64)])
            b = np.concatenate([b, np.asarray(extra_b, dtype=np.int64)])
            d = np.vstack([d, np.zeros((len(extra_a), k))])
            tie = np.stack(extra_w, axis=1)
            won = np.hstack([won, 0.5 * tie])
            played = np.hstack([played, tie])
        total = played.sum(axis=1, keepdims=True)
        total = np.where(total > 0, total, 1.0)
        won /= total
        played /= total
        return self._newton(won, played, a, b, d, start, newton_steps), regularised

    def _newton(
        self,
        won: FloatArray,
        played: FloatArray,
        a: IntArray,
        b: IntArray,
        d: FloatArray,
        start: FloatArray,
        steps: int,
    ) -> FloatArray:
        c, k = self.c, self.k
        size = c + k
        params = start.copy()
        won = np.ascontiguousarray(won, dtype=np.float64)
        played = np.ascontiguousarray(played, dtype=np.float64)
        a = np.ascontiguousarray(a, dtype=np.int64)
        b = np.ascontiguousarray(b, dtype=np.int64)
        d = np.ascontiguousarray(d, dtype=np.float64)
        prior = np.zeros((size, size))
        prior[:c, :c] = self.centring + _RIDGE * np.eye(c)
        prior[c:, c:] = _COEF_RIDGE * np.eye(k)
        active = np.arange(params.shape[0])
        for _ in range(steps):
            if active.size == 0:
                break
            current = params[active]
            grad, hessian = _gradient_and_hessian(current, a, b, d, won, played, active)
            grad += current @ prior  # the centring and ridge terms
            hessian += prior
            try:
                step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:  # parts linked only by vanishing weights
                hessian += _COEF_RIDGE * np.eye(size)
                step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
            longest = np.abs(step).max(axis=1)
            step *= np.minimum(1.0, _MAX_STEP / np.maximum(longest, 1e-300))[:, None]
            params[active] -= step
            active = active[longest >= _NEWTON_TOL]
        return params

    def ratings(self, params: FloatArray, anchor: int | None) -> FloatArray:
        """Elo-scale ratings (S, C): per part, the anchor (or the mean) at 1000."""
        theta = params[:, : self.c] * ELO_PER_NAT
        out = np.full_like(theta, np.nan)
        for part in self.components:
            if len(part) < 2:
                continue
            sub = theta[:, part]
            if anchor is not None and anchor in part:
                shift = theta[:, anchor : anchor + 1]
            else:
                shift = sub.mean(axis=1, keepdims=True)
            out[:, part] = sub - shift + BASE_RATING
        return out


def _solve(
    fitter: _Fitter,
    mult: FloatArray,
    as_contestant: IntArray,
    n_reviewers: int,
    weighted: bool,
    tol: float,
    max_iter: int,
    start: FloatArray | None = None,
    newton_steps: int = _NEWTON_ITER,
    given_weights: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, IntArray, NDArray[np.bool_], FloatArray]:
    """Joint fit for each set of `mult`: params, weights, iterations, converged, damping.

    Newton starts from `start` (zeros when None). With `newton_steps` below the
    full count, each weight update refits the ratings by that many Newton steps
    only (the two iterations then converge together); the result is checked
    afterwards: every set is refitted in full at its weights, and a set whose
    weights that refit would move by `tol` or more is solved again the full way.
    """
    sets = mult.shape[0]
    size = fitter.c + fitter.k
    params = np.zeros((sets, size)) if start is None else np.array(start, dtype=np.float64)

    def refit(index: IntArray, weights: FloatArray, steps: int = _NEWTON_ITER) -> FloatArray:
        fitted, _ = fitter.fit(weights * n_reviewers, mult[index], params[index], steps)
        params[index] = fitted
        return fitted

    if given_weights is not None or not weighted:
        given = (
            np.full((sets, n_reviewers), 1.0 / max(n_reviewers, 1))
            if given_weights is None
            else given_weights
        )
        refit(np.arange(sets), given)
        zeros = np.zeros(sets, dtype=np.int64)
        return params, given, zeros, np.ones(sets, dtype=bool), np.zeros(sets)

    def weights_of(theta: FloatArray) -> FloatArray:
        scores = np.where(fitter.scored, theta, np.nan)
        return weights_from_scores(scores, as_contestant)

    def update(index: IntArray, weights: FloatArray) -> FloatArray:
        return weights_of(refit(index, weights, newton_steps)[:, : fitter.c])

    fixed = solve_weights(update, sets, n_reviewers, tol=tol, max_iter=max_iter)
    everything = np.arange(sets)
    theta = refit(everything, fixed.weights)[:, : fitter.c]
    if newton_steps < _NEWTON_ITER:
        moved = np.abs(weights_of(theta) - fixed.weights).max(axis=1, initial=0.0)
        redo = np.flatnonzero((moved >= tol) | ~fixed.converged)
        if redo.size:
            again = _solve(
                fitter,
                mult[redo],
                as_contestant,
                n_reviewers,
                weighted,
                tol,
                max_iter,
                start=params[redo],
            )
            params[redo] = again[0]
            fixed.weights[redo] = again[1]
            fixed.iterations[redo] = again[2]
            fixed.converged[redo] = again[3]
            fixed.damping[redo] = again[4]
    return (
        params,
        fixed.weights,
        fixed.iterations,
        fixed.converged,
        fixed.damping,
    )


def _sandwich_covariance(
    fitter: _Fitter,
    params: FloatArray,
    mean_normalised: FloatArray,
    regularised: list[int],
) -> FloatArray:
    """Cluster-robust (by question) covariance (C + K, C + K) of the fitted log-strengths
    and coefficients, per-part centred strengths, at fixed reviewer weights.

    With each answer-pair group's weighted win value `v_g` and count `n_g` (the
    reviewer weights mean-normalised, as in the fit), `x_g = (e_A - e_B, d_g)`
    and `p_g = sigmoid(theta_A - theta_B + beta . d_g)`: bread
    `H = sum_g n_g p_g (1 - p_g) x_g x_g^T` (plus the fit's virtual ties of
    regularised parts and its weak prior on the coefficients), meat
    `Q / (Q - 1) sum_q U_q U_q^T` with `U_q = sum_{g in q} (v_g - n_g p_g) x_g`
    (centred over questions), covariance `H^+ meat H^+`; the pseudo-inverse
    fixes each part's common shift as the fit's centring does.
    """
    g = fitter.groups
    c, k = fitter.c, fitter.k
    size = c + k
    won = g.value @ mean_normalised
    played = g.count @ mean_normalised
    theta, beta = params[:c], params[c:]
    p = expit(theta[g.a] - theta[g.b] + g.d @ beta)
    resid = won - played * p
    info = played * p * (1.0 - p)
    q = g.n_questions
    scores = np.zeros((q, size))
    scores[:, :c] = (
        np.bincount(g.question * c + g.a, weights=resid, minlength=q * c)
        - np.bincount(g.question * c + g.b, weights=resid, minlength=q * c)
    ).reshape(q, c)
    for f in range(k):
        scores[:, c + f] = np.bincount(g.question, weights=resid * g.d[:, f], minlength=q)
    scores -= scores.mean(axis=0, keepdims=True)  # zero at the optimum; exact with the priors
    pair = np.zeros((c, c))
    np.add.at(pair, (g.a, g.b), info)
    for index in regularised:  # the fit's virtual ties (d = 0) in parts it regularised
        members = np.asarray(fitter.components[index])
        for i, j in fitter.virtual[index]:
            a, b = members[i], members[j]
            pv = float(expit(np.array(theta[a] - theta[b])))
            pair[a, b] += VIRTUAL_TIE * pv * (1.0 - pv)
    pair += pair.T
    hessian = np.zeros((size, size))
    hessian[:c, :c] = np.diag(pair.sum(axis=1)) - pair
    cross = np.zeros((c, k))
    weighted_d = g.d * info[:, None]
    np.add.at(cross, g.a, weighted_d)
    np.subtract.at(cross, g.b, weighted_d)
    hessian[:c, c:] = cross
    hessian[c:, :c] = cross.T
    hessian[c:, c:] = weighted_d.T @ g.d + _COEF_RIDGE * float(played.sum()) * np.eye(k)
    meat = q / (q - 1) * scores.T @ scores
    inverse = np.linalg.pinv(hessian, hermitian=True)
    cov: FloatArray = inverse @ meat @ inverse
    return cov


def _rating_covariance(
    fitter: _Fitter, cov: FloatArray, rating: FloatArray, anchor: int | None
) -> FloatArray:
    """The ratings' covariance (C, C), Elo points squared, per part as `ratings` anchors them."""
    c = fitter.c
    out = np.full((c, c), np.nan)
    for part in fitter.components:
        members = [i for i in part if not np.isnan(rating[i])]
        if len(members) < 2:
            continue
        idx = np.asarray(members)
        v = cov[np.ix_(idx, idx)] * ELO_PER_NAT**2
        if anchor is not None and anchor in members:
            contrast = np.eye(len(members))
            contrast[:, members.index(anchor)] -= 1.0
            v = contrast @ v @ contrast.T
        out[np.ix_(idx, idx)] = v
    return out


def style_sandwich(
    fitter: _Fitter,
    params: FloatArray,
    weights: FloatArray,
    regularised: list[int],
    rating: FloatArray,
    anchor: int | None,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Sandwich intervals of a style fit: rating low/high (C,), coefficient low/high (K,)
    and the ratings' covariance (C, C).

    `params` (C + K) and `weights` (R, summing to 1) are the full data's fit.
    A model that lost (won) nothing has no upper (lower) bound, as with plain
    Bradley-Terry.
    """
    g = fitter.groups
    c = fitter.c
    r = g.value.shape[1]
    cov = _sandwich_covariance(fitter, params, weights * r, regularised)
    rating_cov = _rating_covariance(fitter, cov, rating, anchor)
    sd = np.sqrt(np.clip(np.diag(rating_cov), 0.0, None))
    low, high = rating - Z_95 * sd, rating + Z_95 * sd
    won_value = g.value @ weights
    lost_value = (g.count - g.value) @ weights
    won = np.bincount(g.a, weights=won_value, minlength=c) + np.bincount(
        g.b, weights=lost_value, minlength=c
    )
    lost = np.bincount(g.a, weights=lost_value, minlength=c) + np.bincount(
        g.b, weights=won_value, minlength=c
    )
    fitted = ~np.isnan(rating) & ~np.isnan(sd)
    high[fitted & (lost <= 0) & (won > 0)] = np.inf
    low[fitted & (won <= 0) & (lost > 0)] = -np.inf
    coef_sd = np.sqrt(np.clip(np.diag(cov)[c:], 0.0, None))
    coef = params[c:]
    return low, high, coef - Z_95 * coef_sd, coef + Z_95 * coef_sd, rating_cov


def fit_style_control(
    rs: ReviewSet,
    *,
    bootstrap_counts: FloatArray | None = None,
    anchor: int | None = None,
    weighted: bool = True,
    tol: float = 1e-9,
    max_iter: int = 100,
    weights: FloatArray | None = None,
    sandwich: bool = False,
) -> StyleFit:
    """Style-controlled Bradley-Terry of `rs` (which must carry style features).

    `bootstrap_counts` (rounds x questions) are the question multiplicities of
    the bootstrap rounds (`bootstrap_counts` of arena.rank), the same draws as
    the plain fit's. With `weighted=False` every reviewer weighs the same.
    `weights` (1 + rounds, R), when given, are fixed reviewer weights (each row
    summing to 1) of the full data and of every round: the ratings and
    coefficients are fitted at them, nothing iterated.
    `sandwich`: intervals (ratings, coefficients, and the ratings' covariance
    for rank intervals and neighbour shares) from the cluster-robust sandwich
    by question at the fitted weights, instead of bootstrap percentiles; the
    bootstrap rounds are then not fitted (`bootstrap_counts` and the rows of
    `weights` after the first are ignored).
    Raises ValueError when `rs` has no style features or some battle lacks them.
    """
    if rs.style_a is None or rs.style_b is None:
        raise ValueError("the reviews carry no answer lengths: style control is unavailable")
    if rs.style_missing:
        raise ValueError(f"{rs.style_missing} counted review(s) lack answer style features")
    d, names = _differences(rs)
    rms = np.sqrt(np.mean(d**2, axis=0)) if rs.n_battles else np.zeros(len(names))
    varying = rms > 1e-12
    features = tuple(n for n, v in zip(names, varying.tolist(), strict=True) if v)
    dropped = tuple(n for n, v in zip(names, varying.tolist(), strict=True) if not v)
    d = d[:, varying] / rms[varying]
    groups = _groups(rs, d)
    pairs = np.zeros((rs.n_models, rs.n_models))
    np.add.at(pairs, (groups.a, groups.b), groups.count.sum(axis=1))
    components = comparison_components(pairs)
    fitter = _Fitter(groups, components)
    rounds = 0 if bootstrap_counts is None or rs.n_questions < 2 else bootstrap_counts.shape[0]
    if sandwich:
        rounds = 0
    mult = np.ones((1, rs.n_questions))
    if rounds:
        assert bootstrap_counts is not None
        mult = np.vstack([mult, bootstrap_counts])
    chunk = max(1, _CHUNK_CELLS // max(1, groups.a.size))
    solve = (rs.reviewer_as_contestant, rs.n_reviewers, weighted, tol, max_iter)
    # The full data set first, the full way; the bootstrap rounds then start
    # from its solution and take one Newton step per weight update (checked).
    given = None if weights is None else np.asarray(weights, dtype=np.float64)
    parts = [_solve(fitter, mult[:1], *solve, given_weights=None if given is None else given[:1])]
    for start in range(1, mult.shape[0], chunk):
        rows = mult[start : start + chunk]
        warm = np.repeat(parts[0][0], rows.shape[0], axis=0)
        round_weights = None if given is None else given[start : start + chunk]
        parts.append(
            _solve(
                fitter,
                rows,
                *solve,
                start=warm,
                newton_steps=_BOOT_NEWTON_STEPS,
                given_weights=round_weights,
            )
        )
    params = np.vstack([p[0] for p in parts])
    weights = np.vstack([p[1] for p in parts])
    first = parts[0]
    _, regularised = fitter.fit(weights[:1] * rs.n_reviewers, mult[:1], params[:1])
    rating = fitter.ratings(params, anchor)
    coef = params[:, fitter.c :]
    nan_c = np.full(rs.n_models, np.nan)
    nan_k = np.full(coef.shape[1], np.nan)
    boot = rating[1:] if rounds else None
    ci_low = np.percentile(rating[1:], 2.5, axis=0) if rounds else nan_c
    ci_high = np.percentile(rating[1:], 97.5, axis=0) if rounds else nan_c
    coef_low = np.percentile(coef[1:], 2.5, axis=0) if rounds else nan_k
    coef_high = np.percentile(coef[1:], 97.5, axis=0) if rounds else nan_k
    covariance = None
    if sandwich and rs.n_questions >= 2:
        ci_low, ci_high, coef_low, coef_high, covariance = style_sandwich(
            fitter, params[0], weights[0], regularised, rating[0], anchor
        )
    return StyleFit(
        features=features,
        dropped=dropped,
        scale=rms[varying],
        coef=coef[0],
        coef_low=coef_low,
        coef_high=coef_high,
        rating=rating[0],
        ci_low=ci_low,
        ci_high=ci_high,
        boot_rating=boot,
        weights=weights[0],
        iterations=int(first[2][0]),
        converged=bool(first[3][0]),
        damping=float(first[4][0]),
        components=components,
        regularised=regularised,
        bootstrap_rounds=rounds,
        covariance=covariance,
    )


def _totals(
    weights: FloatArray,
    mult: FloatArray,
    value: FloatArray,
    count: FloatArray,
    question: IntArray,
    a: IntArray,
    b: IntArray,
    c: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Weighted win value and count per group (S, G), and each set's "beats" matrix
    (S, C, C): what `_Fitter.totals` returns."""
    sets = weights.shape[0]
    m = mult[:, question]
    won: FloatArray = m * (weights @ value.T)
    played: FloatArray = m * (weights @ count.T)
    forward = a * c + b
    backward = b * c + a
    cells = np.concatenate([forward, backward])
    offsets = (np.arange(sets, dtype=np.int64) * c * c)[:, None]
    values = np.concatenate([won, played - won], axis=1)
    beats: FloatArray = np.bincount(
        (cells[None, :] + offsets).ravel(), weights=values.ravel(), minlength=sets * c * c
    ).astype(np.float64)
    return won, played, beats.reshape(sets, c, c)


def _by_pair(values: FloatArray, cell: IntArray, cells: int) -> FloatArray:
    """Sums of `values` (S, G, ...) over the groups of each cell: (S, cells, ...)."""
    order = np.argsort(cell, kind="stable")
    sorted_cells = cell[order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    out = np.zeros((values.shape[0], cells, *values.shape[2:]))
    if starts.size:
        out[:, sorted_cells[starts]] = np.add.reduceat(values[:, order], starts, axis=1)
    return out


def _gradient_and_hessian(
    params: FloatArray,
    a: IntArray,
    b: IntArray,
    d: FloatArray,
    won: FloatArray,
    played: FloatArray,
    rows: IntArray,
) -> tuple[FloatArray, FloatArray]:
    """Gradient and Hessian (S, P) and (S, P, P) of the style model's negative
    log-likelihood for the sets `rows`: the sums run per ordered pair of models,
    then spread over the gradient and Hessian."""
    sets, size = params.shape
    k = d.shape[1]
    c = size - k
    theta, beta = params[:, :c], params[:, c:]
    n = played[rows]
    p = expit(theta[:, a] - theta[:, b] + beta @ d.T)  # (S, G)
    resid = np.where(n == 0.0, 0.0, n * p - won[rows])
    curve = n * p * (1.0 - p)
    cell = a * c + b
    pair_resid = _by_pair(resid, cell, c * c).reshape(sets, c, c)
    pair_curve = _by_pair(curve, cell, c * c).reshape(sets, c, c)
    weighted = curve[:, :, None] * d[None, :, :]  # (S, G, K)
    pair_cross = _by_pair(weighted, cell, c * c).reshape(sets, c, c, k)
    grad = np.empty((sets, size))
    grad[:, :c] = pair_resid.sum(axis=2) - pair_resid.sum(axis=1)
    grad[:, c:] = resid @ d
    hess = np.empty((sets, size, size))
    block = -(pair_curve + np.swapaxes(pair_curve, 1, 2))
    diagonal = np.arange(c)
    block[:, diagonal, diagonal] += pair_curve.sum(axis=2) + pair_curve.sum(axis=1)
    hess[:, :c, :c] = block
    cross = pair_cross.sum(axis=2) - pair_cross.sum(axis=1)  # (S, C, K)
    hess[:, :c, c:] = cross
    hess[:, c:, :c] = np.swapaxes(cross, 1, 2)
    hess[:, c:, c:] = np.swapaxes(weighted, 1, 2) @ d
    return grad, hess
