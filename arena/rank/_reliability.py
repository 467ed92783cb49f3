"""Reviewer reliability: judges weighed by how well they judge, not by how well they compete.

A latent model fitted jointly with the model strengths (crowd-BT and
Dawid-Skene in spirit). Reviewer `r` judging answer `i` (shown first) against
`j` says "first wins" with probability

    P = sigmoid(a_r (s_i - s_j) + b_r + c_r ([r is i] - [r is j]))

with model strengths `s` (natural log-odds of the average judge), and per
reviewer a discrimination `a_r` (how strongly its verdicts follow the strength
difference: 0 is a coin, 1 the average judge, negative an adversary), a
position bias `b_r` (log-odds towards the answer shown first) and a
self-preference `c_r` (log-odds towards its own answer; 0 for a reviewer that
does not compete). A tie is half a win each way.

The fit is maximum likelihood with weak Gaussian priors (`a ~ N(1, 1)`,
`b, c ~ N(0, 1)`, `s ~ N(0, 100)`, in units of one review), by alternating
Newton steps: the strengths given the reviewers (a weighted logistic
regression with offsets), then every reviewer's (a, b, c) given the
strengths (one small logistic regression each). Both blocks are convex; the
scale shared by `a` and `s` is fixed after every sweep by making the
battle-weighted mean discrimination 1. All sets of a batch (bootstrap rounds)
are fitted side by side on (sets, R, C, C) count arrays, so the cost depends
on the numbers of models and reviewers, never on the number of reviews.

Weights: a reviewer's weight is proportional to `max(a_r, 0)`. For a pooled
win count (Bradley-Terry on weighted pair wins), a verdict of reviewer r
moves the expected count by `a_r * gap / 4` and adds variance 1/4, so the
signal-to-noise ratio of `sum w_r (y - 1/2)` is largest at `w_r ~ a_r`
(Cauchy-Schwarz). Self-reviews inform only `c_r` (and a little `a_r`, `b_r`):
the ratings computed with these weights leave them out (`trusted_tensor`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import A_WINS, B_WINS, TIE, QuestionFeatures, resample
from arena.rank._encode import ReviewSet
from arena.rank._numeric import expit

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "ReliabilityBatch",
    "ReliabilityFit",
    "fit_reliability",
    "fit_reliability_batch",
    "reliability_features",
    "reliability_weights",
    "resample_reliability",
    "self_mask",
    "trusted_reviews",
    "trusted_tensor",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Prior precisions, in units of one review: a ~ N(1, 1), b, c ~ N(0, 1), s ~ N(0, 100).
PRIOR_DISCRIMINATION = 1.0
PRIOR_BIAS = 1.0
PRIOR_STRENGTH = 0.01
# Stop when no parameter moves by this much in a sweep; and after this many sweeps.
RELIABILITY_TOL = 1e-8
RELIABILITY_MAX_SWEEPS = 500
# Longest Newton step (log-odds) on any parameter: safe far from the optimum.
_MAX_STEP = 1.0
# Per-question features stay dense up to this many cells.
_DENSE_FEATURES = 20_000_000


def self_mask(as_contestant: IntArray, n_models: int) -> FloatArray:
    """`selfsign[r, i, j]`: +1 when reviewer r wrote answer i, -1 when it wrote j, else 0."""
    r = as_contestant.shape[0]
    out = np.zeros((r, n_models, n_models))
    for k in range(r):
        own = int(as_contestant[k])
        if own >= 0:
            out[k, own, :] += 1.0
            out[k, :, own] -= 1.0
    return out


def trusted_tensor(win: FloatArray, as_contestant: IntArray) -> FloatArray:
    """Win tensor(s) (..., R, C, C) with every reviewer's own battles left out."""
    mask = self_mask(as_contestant, win.shape[-1]) != 0
    out: FloatArray = np.where(mask, 0.0, win)
    return out


@dataclass(frozen=True, eq=False)
class ReliabilityBatch:
    """The reliability model fitted to several data sets at once (arrays lead with the set)."""

    weights: FloatArray  # (sets, R), each row sums to 1
    discrimination: FloatArray  # (sets, R)
    position_bias: FloatArray  # (sets, R), NaN where the battles cannot measure it
    self_preference: FloatArray  # (sets, R), NaN for a reviewer without own battles
    strength: FloatArray  # (sets, C), natural log-odds, mean 0 over models with battles
    accuracy: FloatArray  # (sets, R): share of trusted verdicts that follow the strengths
    battles: FloatArray  # (sets, R): trusted (not self) battles
    iterations: IntArray  # (sets,)
    converged: NDArray[np.bool_]  # (sets,)


@dataclass(frozen=True, eq=False)
class ReliabilityFit:
    """The reliability model of one review set (see the module docstring).

    `weights` (R,) sum to 1 and are proportional to `max(discrimination, 0)`
    over reviewers with trusted battles. `accuracy` is the share of a
    reviewer's trusted battles (not its own) whose verdict names the model with
    the higher fitted strength (ties half; pairs of equal strength left out).
    """

    reviewers: tuple[str, ...]
    weights: FloatArray
    discrimination: FloatArray
    position_bias: FloatArray  # NaN where the battles cannot measure it (position_measurable)
    self_preference: FloatArray
    strength: FloatArray
    accuracy: FloatArray
    battles: FloatArray
    iterations: int
    converged: bool


def _split(count: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Battles and first-position win value (A + tie/2) from verdict counts (..., 3)."""
    played: FloatArray = count.sum(axis=-1)
    won: FloatArray = count[..., A_WINS] + 0.5 * count[..., TIE]
    return played, won


def fit_reliability_batch(
    played: FloatArray,
    won: FloatArray,
    as_contestant: IntArray,
    *,
    start: ReliabilityBatch | ReliabilityFit | None = None,
    tol: float = RELIABILITY_TOL,
    max_sweeps: int = RELIABILITY_MAX_SWEEPS,
) -> ReliabilityBatch:
    """Fit the reliability model to every set of `played`, `won` (sets, R, C, C).

    `played[b, r, i, j]` counts reviewer r's battles of i (shown first) against j
    in set b, `won` the first-shown answer's win value in them (a tie 1/2).
    `start` (a batch of the same sets, or of one set, broadcast) warm-starts
    the sweeps, as bootstrap rounds do from the full data's fit.
    """
    sets, n_r, c, _ = played.shape
    selfsign = self_mask(as_contestant, c)
    competes = as_contestant >= 0
    trusted = (selfsign == 0)[None] * played
    battles = trusted.sum(axis=(2, 3))
    has_model = (played.sum(axis=(1, 3)) + played.sum(axis=(1, 2))) > 0  # (sets, C)
    measurable = position_measurable(played.sum(axis=0))  # (R,)
    if start is None:
        a = np.ones((sets, n_r))
        b = np.zeros((sets, n_r))
        cc = np.zeros((sets, n_r))
        s = np.zeros((sets, c))
    else:
        a = np.broadcast_to(start.discrimination, (sets, n_r)).copy()
        b = np.nan_to_num(np.broadcast_to(start.position_bias, (sets, n_r))).copy()
        cc = np.nan_to_num(np.broadcast_to(start.self_preference, (sets, n_r))).copy()
        s = np.broadcast_to(start.strength, (sets, c)).copy()
    iterations = np.zeros(sets, dtype=np.int64)
    converged = np.zeros(sets, dtype=bool)
    active = np.arange(sets)
    eye_c = np.eye(c)
    for sweep in range(1, max_sweeps + 1):
        if active.size == 0:
            break
        n, y = played[active], won[active]
        aa, bb, ca, ss = a[active], b[active], cc[active], s[active]
        present = has_model[active]
        # Strengths given the reviewers: one Newton step.
        gap = ss[:, None, :, None] - ss[:, None, None, :]
        eta = aa[:, :, None, None] * gap + bb[:, :, None, None] + ca[:, :, None, None] * selfsign
        p = expit(eta)
        resid = y - n * p
        curv = n * p * (1.0 - p)
        g_pair = np.einsum("br,brij->bij", aa, resid)
        w_pair = np.einsum("br,brij->bij", aa * aa, curv)
        w_sym = w_pair + w_pair.transpose(0, 2, 1)
        grad = g_pair.sum(axis=2) - g_pair.sum(axis=1) - PRIOR_STRENGTH * ss
        hess = -w_sym + PRIOR_STRENGTH * eye_c
        hess[:, np.arange(c), np.arange(c)] += w_sym.sum(axis=2)
        # Models without battles are held at 0.
        absent = ~present
        hess = np.where(absent[:, :, None] | absent[:, None, :], 0.0, hess)
        hess[:, np.arange(c), np.arange(c)] += np.where(absent, 1.0, 0.0)
        grad = np.where(absent, 0.0, grad)
        step_s = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step_s = _capped(step_s)
        ss = ss + step_s
        # Reviewers given the strengths: one Newton step on (a, b, c) each.
        gap = ss[:, None, :, None] - ss[:, None, None, :]
        eta = aa[:, :, None, None] * gap + bb[:, :, None, None] + ca[:, :, None, None] * selfsign
        p = expit(eta)
        resid = y - n * p
        curv = n * p * (1.0 - p)
        full = n.shape
        x = (np.broadcast_to(gap, full), np.ones(full), np.broadcast_to(selfsign, full))
        g_r = np.stack([(resid * xk).sum(axis=(2, 3)) for xk in x], axis=-1)
        h_r = np.empty(g_r.shape + (3,))
        for k in range(3):
            for m in range(k, 3):
                h_r[..., k, m] = h_r[..., m, k] = (curv * x[k] * x[m]).sum(axis=(2, 3))
        params = np.stack([aa, bb, ca], axis=-1)
        prior = np.array([PRIOR_DISCRIMINATION, PRIOR_BIAS, PRIOR_BIAS])
        centre = np.array([1.0, 0.0, 0.0])
        g_r -= prior * (params - centre)
        h_r += np.diag(prior)
        step_r = np.linalg.solve(h_r, g_r[..., None])[..., 0]
        step_r = _capped(step_r.reshape(step_r.shape[0], -1)).reshape(step_r.shape)
        params = params + step_r
        aa, bb, ca = params[..., 0], params[..., 1], params[..., 2]
        ca = np.where(competes[None], ca, 0.0)
        bb = np.where(measurable[None], bb, 0.0)
        # The shared scale: battle-weighted mean discrimination 1, strengths mean 0.
        weight = battles[active]
        total = weight.sum(axis=1)
        scale = np.where(total > 0, (aa * weight).sum(axis=1) / np.maximum(total, 1e-300), 1.0)
        scale = np.where(scale > 0.05, scale, 1.0)
        aa = aa / scale[:, None]
        ss = ss * scale[:, None]
        count_present = np.maximum(present.sum(axis=1), 1)
        ss = np.where(
            present, ss - (ss * present).sum(axis=1, keepdims=True) / count_present[:, None], 0.0
        )
        moved = np.maximum(
            np.abs(ss - s[active]).max(axis=1, initial=0.0),
            np.abs(np.stack([aa - a[active], bb - b[active], ca - cc[active]])).max(axis=(0, 2)),
        )
        a[active], b[active], cc[active], s[active] = aa, bb, ca, ss
        iterations[active] = sweep
        done = moved < tol
        converged[active[done]] = True
        active = active[~done]
    b = np.where(measurable[None], b, np.nan)
    return _batch(played, won, selfsign, battles, a, b, cc, s, iterations, converged, competes)


def position_measurable(played: FloatArray) -> NDArray[np.bool_]:
    """Per reviewer, whether its battles `played` (R, C, C; first-shown model first)
    measure a position bias apart from the models' strengths.

    They do not when the models can be given levels such that every battle shows a
    model one level above the other first (AlpacaEval: the baseline always first):
    raising each model's strength by t times its level and lowering the bias by t
    then changes no prediction. A pair judged in both orders, or any cycle that
    breaks the levels, measures it.
    """
    n_r, c, _ = played.shape
    out = np.zeros(n_r, dtype=bool)
    for r in range(n_r):
        edges = played[r] > 0
        unset = np.iinfo(np.int64).min
        level = np.full(c, unset, dtype=np.int64)
        for root in range(c):
            if level[root] != unset or not (edges[root].any() or edges[:, root].any()):
                continue
            level[root] = 0
            stack = [root]
            while stack and not out[r]:
                i = stack.pop()
                # i shown first against j: j one level below; j first against i: one above.
                below = [(j, int(level[i]) - 1) for j in np.flatnonzero(edges[i]).tolist()]
                above = [(j, int(level[i]) + 1) for j in np.flatnonzero(edges[:, i]).tolist()]
                for j, want in below + above:
                    if level[j] == unset:
                        level[j] = want
                        stack.append(j)
                    elif level[j] != want:
                        out[r] = True
                        break
            if out[r]:
                break
    return out


def _capped(step: FloatArray) -> FloatArray:
    size = np.abs(step).max(axis=-1, keepdims=True)
    out: FloatArray = step * np.minimum(1.0, _MAX_STEP / np.maximum(size, 1e-300))
    return out


def _batch(
    played: FloatArray,
    won: FloatArray,
    selfsign: FloatArray,
    battles: FloatArray,
    a: FloatArray,
    b: FloatArray,
    cc: FloatArray,
    s: FloatArray,
    iterations: IntArray,
    converged: NDArray[np.bool_],
    competes: NDArray[np.bool_],
) -> ReliabilityBatch:
    judged = battles > 0
    own_battles = (played * (selfsign != 0)[None]).sum(axis=(2, 3))
    raw = np.where(judged, np.maximum(a, 0.0), 0.0)
    total = raw.sum(axis=1, keepdims=True)
    n_r = a.shape[1]
    weights = np.where(total > 0, raw / np.where(total > 0, total, 1.0), 1.0 / max(n_r, 1))
    gap = s[:, None, :, None] - s[:, None, None, :]
    trusted = selfsign[None] == 0
    follows = np.where(gap > 0, won, played - won)
    decided = trusted & (np.abs(gap) > 1e-12)
    agree = np.where(decided, follows, 0.0).sum(axis=(2, 3))
    seen = np.where(decided, played, 0.0).sum(axis=(2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(seen > 0, agree / np.where(seen > 0, seen, 1.0), np.nan)
    return ReliabilityBatch(
        weights=weights,
        discrimination=a,
        position_bias=b,
        self_preference=np.where(competes[None] & (own_battles > 0), cc, np.nan),
        strength=s,
        accuracy=accuracy,
        battles=battles,
        iterations=iterations,
        converged=converged,
    )


def fit_reliability(
    rs: ReviewSet, *, count: FloatArray | None = None, tol: float = RELIABILITY_TOL
) -> ReliabilityFit:
    """The reliability model of a review set (every counted battle, self-reviews included).

    `count` (R, C, C, 3), when given, are the set's verdict counts
    (`tally_reviews(rs).count`); otherwise they are counted here.
    """
    if count is None:
        count = _counts(rs)
    played, won = _split(count)
    batch = fit_reliability_batch(played[None], won[None], rs.reviewer_as_contestant, tol=tol)
    return _single(rs.reviewers, batch)


def _single(reviewers: tuple[str, ...], batch: ReliabilityBatch) -> ReliabilityFit:
    return ReliabilityFit(
        reviewers=reviewers,
        weights=batch.weights[0],
        discrimination=batch.discrimination[0],
        position_bias=batch.position_bias[0],
        self_preference=batch.self_preference[0],
        strength=batch.strength[0],
        accuracy=batch.accuracy[0],
        battles=batch.battles[0],
        iterations=int(batch.iterations[0]),
        converged=bool(batch.converged[0]),
    )


def _cell_index(rs: ReviewSet) -> IntArray:
    c = rs.n_models
    out: IntArray = (rs.reviewer.astype(np.int64) * c + rs.model_a) * c + rs.model_b
    return out


def _counts(rs: ReviewSet) -> FloatArray:
    """Verdict counts (R, C, C, 3) in the categories of arena.rank._aggregate."""
    r, c = rs.n_reviewers, rs.n_models
    category = np.array([A_WINS, TIE, B_WINS], dtype=np.int64)[rs.score.astype(np.int64) + 1]
    index = _cell_index(rs) * 3 + category
    flat = np.bincount(index, minlength=r * c * c * 3).astype(np.float64)
    return flat.reshape(r, c, c, 3)


def reliability_weights(rs: ReviewSet) -> dict[str, float]:
    """Each reviewer's reliability weight (summing to 1), by name: for choosing reviewers.

    The weights of `fit_reliability(rs)`; a reviewer without trusted battles
    gets 0 unless no reviewer has any (then all are equal).
    """
    fit = fit_reliability(rs)
    return {name: float(w) for name, w in zip(rs.reviewers, fit.weights, strict=True)}


def reliability_features(rs: ReviewSet) -> QuestionFeatures:
    """Per question, twice the battles and twice the first-shown win value of every cell.

    A (questions x 2*R*C*C) integer matrix in the shape `resample` expects
    ((2R, C, C): battles first, then win values), so that one matrix product
    gives the counts of every bootstrap round.
    """
    r, c = rs.n_reviewers, rs.n_models
    cells = r * c * c
    n_q = rs.n_questions
    if n_q * 2 * cells <= _DENSE_FEATURES:
        # Each review adds 2 to its cell's battles and 1 - score (2 an A win, 1 a tie) to
        # its cell's win value, in place, a slice of reviews at a time: the matrix is in
        # the narrowest integer that holds twice a question's reviews, and nothing else
        # of the size of the matrix (or of 8 bytes a review) stands beside it.
        most = int(np.bincount(rs.question).max(initial=0)) if rs.n_battles else 0
        dtype = np.int8 if 2 * most <= 127 else np.int16 if 2 * most < 1 << 15 else np.int32
        matrix: NDArray[np.integer[Any]] | sp.csr_matrix = np.zeros((n_q, 2 * cells), dtype=dtype)
        flat = matrix.reshape(-1)
        for start in range(0, rs.n_battles, _MASK_SLICE):
            part = slice(start, start + _MASK_SLICE)
            index = rs.question[part].astype(np.int64) * (2 * cells)
            index += (rs.reviewer[part].astype(np.int64) * c + rs.model_a[part]) * c
            index += rs.model_b[part]
            np.add.at(flat, index, 2)
            index += cells
            np.add.at(flat, index, (1 - rs.score[part]).astype(dtype))
    else:
        import scipy.sparse as sp

        q = rs.question.astype(np.int64)
        cell = _cell_index(rs)
        doubled_won = (1 - rs.score.astype(np.int64)).astype(np.int64)  # 2 * (1 - s) / 2
        rows = np.concatenate([q, q])
        cols = np.concatenate([cell, cells + cell])
        data = np.concatenate([np.full(q.size, 2, dtype=np.int64), doubled_won])
        matrix = sp.csr_matrix((data, (rows, cols)), shape=(n_q, 2 * cells), dtype=np.int64)
        matrix.sum_duplicates()
    return QuestionFeatures(matrix, (2 * r, c, c))


def resample_reliability(
    features: QuestionFeatures, counts: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Battles and win values (rounds, R, C, C) of bootstrap draws `counts` (rounds x questions)."""
    both = resample(features, counts)
    r = both.shape[1] // 2
    return both[:, :r], both[:, r:]


def trusted_slices(
    rs: ReviewSet, own: IntArray | None = None
) -> Iterator[tuple[slice, NDArray[np.bool_]]]:
    """(a slice of the reviews, which of them are not of the reviewer's own battles), a
    slice at a time (no temporary of 8 bytes a review). `own[reviewer]`: the reviewer's
    contestant code, or -1 (default `rs.reviewer_as_contestant`)."""
    own = rs.reviewer_as_contestant if own is None else own
    for start in range(0, rs.n_battles, _MASK_SLICE):
        part = slice(start, start + _MASK_SLICE)
        mine = own[rs.reviewer[part]]
        yield part, (mine != rs.model_a[part]) & (mine != rs.model_b[part])


def trusted_mask(rs: ReviewSet) -> NDArray[np.bool_] | None:
    """Which reviews are not of the reviewer's own battles (None: every one)."""
    keep = np.empty(rs.n_battles, dtype=np.bool_)
    for part, kept in trusted_slices(rs):
        keep[part] = kept
    return None if bool(keep.all()) else keep


def trusted_count(rs: ReviewSet) -> int:
    """How many reviews are not of the reviewer's own battles (no mask is kept)."""
    return sum(int(np.count_nonzero(kept)) for _, kept in trusted_slices(rs))


# Reviews `trusted_mask` looks at together.
_MASK_SLICE = 1 << 18


def trusted_reviews(rs: ReviewSet, keep: NDArray[np.bool_] | None = None) -> ReviewSet:
    """`rs` without the reviews a reviewer made of its own battles (style kept in step);
    `keep`: their `trusted_mask`, when known."""
    keep = trusted_mask(rs) if keep is None else keep
    if keep is None:
        return rs
    return dataclasses.replace(
        rs,
        question=rs.question[keep],
        model_a=rs.model_a[keep],
        model_b=rs.model_b[keep],
        reviewer=rs.reviewer[keep],
        score=rs.score[keep],
        style_a=None if rs.style_a is None else rs.style_a[keep],
        style_b=None if rs.style_b is None else rs.style_b[keep],
        n_self_excluded=rs.n_self_excluded + int((~keep).sum()),
    )
