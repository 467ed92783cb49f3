"""PeerRank weighted win rates (PRD paper, Algorithm 2) and plain win counts.

A review's win value is 1 / 0.5 / 0 for a win / tie / loss; a contestant's
score is the weighted mean of its win values, each review weighted by its
reviewer's weight (on the paper's full design, where every contestant meets
every reviewer equally often, this is exactly the published arithmetic). New
reviewer weights are the reviewers' own scores min-max scaled to [0, 1] and
divided by their sum; a reviewer that does not compete gets the mean weight of
the others. When the plain iteration does not settle, it is restarted with
damping, `w <- w + a (f(w) - w)`, the step `a` halved whenever the update
reverses direction. See docs/ranking.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import A_WINS, B_WINS, TIE, Tallies

__all__ = [
    "FixedPoint",
    "PeerRankBatch",
    "PeerRankResult",
    "WinCounts",
    "equal_win_rates",
    "imputed_rates",
    "peerrank",
    "peerrank_batch",
    "solve_weights",
    "weighted_win_rates",
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


# First step of the damped restart; halved at every reversal of direction.
_FIRST_STEP = 0.5


@dataclass(frozen=True, eq=False)
class FixedPoint:
    """Reviewer weights (sets, R) from `solve_weights`, and how they were reached.

    `damping` is the share of the old weights kept by the last update: 0 for
    the plain iteration, `1 - a` after a damped restart. `residual` is
    `max |f(w) - w|` at the returned weights: 0 at a true fixed point, larger
    where the damped iteration settled on the edge between two weightings that
    map onto each other (the min-max rule is not continuous).
    """

    weights: FloatArray
    iterations: IntArray
    converged: NDArray[np.bool_]
    damping: FloatArray
    residual: FloatArray


WeightMap = Callable[[IntArray, FloatArray], FloatArray]


def _plain(update: WeightMap, weights: FloatArray, tol: float, max_iter: int) -> FixedPoint:
    sets = weights.shape[0]
    iterations = np.zeros(sets, dtype=np.int64)
    converged = np.zeros(sets, dtype=bool)
    residual = np.full(sets, np.inf)
    active = np.arange(sets)
    for iteration in range(1, max_iter + 1):
        if active.size == 0:
            break
        new = update(active, weights[active])
        moved = np.abs(new - weights[active]).max(axis=1, initial=0.0)
        weights[active] = new
        iterations[active] = iteration
        residual[active] = moved
        done = moved < tol
        converged[active[done]] = True
        active = active[~done]
    return FixedPoint(weights, iterations, converged, np.zeros(sets), residual)


def _damped(
    update: WeightMap, weights: FloatArray, tol: float, max_iter: int
) -> tuple[IntArray, NDArray[np.bool_], FloatArray, FloatArray]:
    """Damped iteration in place; returns iterations, converged, final step, residual."""
    sets = weights.shape[0]
    step = np.full(sets, _FIRST_STEP)
    previous = np.zeros_like(weights)
    iterations = np.zeros(sets, dtype=np.int64)
    converged = np.zeros(sets, dtype=bool)
    residual = np.full(sets, np.inf)
    active = np.arange(sets)
    for iteration in range(1, max_iter + 1):
        if active.size == 0:
            break
        gap = update(active, weights[active]) - weights[active]
        residual[active] = np.abs(gap).max(axis=1, initial=0.0)
        reversed_ = (gap * previous[active]).sum(axis=1) < 0
        step[active] = np.where(reversed_, 0.5 * step[active], step[active])
        move = step[active, None] * gap
        weights[active] += move
        previous[active] = gap
        iterations[active] = iteration
        done = np.abs(move).max(axis=1, initial=0.0) < tol
        converged[active[done]] = True
        active = active[~done]
    return iterations, converged, step, residual


def solve_weights(
    update: WeightMap, n_sets: int, n_reviewers: int, *, tol: float = 1e-9, max_iter: int = 100
) -> FixedPoint:
    """Iterate `w <- update(sets, w)` from equal weights, for `n_sets` sets at once.

    `update(index, w)` maps the weights (k, R) of the sets `index` to new
    weights (each row summing to 1). Sets whose plain iteration has not settled
    (no weight moving by `tol` or more) after `max_iter` updates restart from
    equal weights with damping, `w <- w + a (update(w) - w)`, `a` starting at
    1/2 and halved whenever the update reverses direction, for up to
    `max_iter` more updates. The result does not depend on where a cycle of
    the plain iteration stopped.
    """
    equal = 1.0 / max(n_reviewers, 1)
    result = _plain(update, np.full((n_sets, n_reviewers), equal), tol, max_iter)
    stuck = np.flatnonzero(~result.converged)
    if stuck.size == 0:
        return result
    weights = np.full((stuck.size, n_reviewers), equal)

    def sub_update(index: IntArray, w: FloatArray) -> FloatArray:
        return update(stuck[index], w)

    iterations, converged, step, residual = _damped(sub_update, weights, tol, max_iter)
    result.weights[stuck] = weights
    result.iterations[stuck] += iterations
    result.converged[stuck] = converged
    result.damping[stuck] = 1.0 - step
    result.residual[stuck] = residual
    return result


def _scores(value: FloatArray, battles: FloatArray, weights: FloatArray) -> FloatArray:
    """Weighted win rate per contestant: `sum_r w_r value[r, c] / sum_r w_r battles[r, c]`.

    A contestant whose reviewers all have weight 0 gets its unweighted rate;
    one without battles gets NaN.
    """
    won = np.einsum("br,brc->bc", weights, value)
    played = np.einsum("br,brc->bc", weights, battles)
    plain_won = value.sum(axis=1)
    plain_played = battles.sum(axis=1)
    weighted = played > _EQUAL_SPAN * np.maximum(plain_played, 1.0)
    won = np.where(weighted, won, plain_won)
    played = np.where(weighted, played, plain_played)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(played > 0, won / np.where(played > 0, played, 1.0), np.nan)
    # Rounding must not carry a rate outside [0, 1].
    out: FloatArray = np.clip(rate, 0.0, 1.0)
    return out


def _balanced_scores(tensors: FloatArray, weights: FloatArray, imputed: FloatArray) -> FloatArray:
    """Opponent-balanced weighted win rate: the mean over opponents of per-pair rates.

    `rate[c, j] = sum_r w_r X[r, c, j] / sum_r w_r (X[r, c, j] + X[r, j, c])`, a
    pair never compared (no weighted battle) taking `imputed[c, j]` instead.
    On a design where every pair carries the same reviewer weight (the full
    design) this is the plain weighted mean; elsewhere it does not depend on
    whom a model happened to meet. A contestant without any battle gets NaN.
    """
    won = np.einsum("br,brij->bij", weights, tensors)
    played = won + won.transpose(0, 2, 1)
    plain = tensors.sum(axis=1)
    plain_played = plain + plain.transpose(0, 2, 1)
    # Where every reviewer of a pair has weight 0, the unweighted rate stands in.
    weighted = played > _EQUAL_SPAN * np.maximum(plain_played, 1.0)
    won = np.where(weighted, won, plain)
    played = np.where(weighted, played, plain_played)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(played > 0, won / np.where(played > 0, played, 1.0), imputed)
    c = tensors.shape[-1]
    off = ~np.eye(c, dtype=np.bool_)
    mean = (rate * off).sum(axis=2) / max(c - 1, 1)
    any_battle = (plain_played.sum(axis=2)) > 0
    out: FloatArray = np.clip(np.where(any_battle, mean, np.nan), 0.0, 1.0)
    return out


def imputed_rates(tensors: FloatArray) -> FloatArray:
    """P(i beats j) from a Bradley-Terry fit of each set's equal-weight pair counts (sets, C, C).

    Used only for pairs never compared; half a virtual tie on every pair keeps
    the fit finite and the comparison graph connected.
    """
    sets, c = tensors.shape[0], tensors.shape[-1]
    pairs = tensors.sum(axis=1)
    compared = (pairs + pairs.transpose(0, 2, 1)) > 0
    off = ~np.eye(c, dtype=np.bool_)
    out = np.full((sets, c, c), 0.5)
    need = np.flatnonzero((~compared & off[None]).any(axis=(1, 2)))
    if need.size and c > 1:
        from arena.rank._bt import fit_log_strengths

        theta = fit_log_strengths(pairs[need] + 0.25 * off[None])
        out[need] = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
    return out


def _value_and_battles(tensors: FloatArray) -> tuple[FloatArray, FloatArray]:
    """From win tensors (sets, R, C, C): win value and battles per (reviewer, contestant)."""
    value = tensors.sum(axis=3)  # (sets, R, C): win value of c in r's reviews
    # Every battle of c carries win value 1 in total, split between c and its opponent.
    battles = value + tensors.sum(axis=2)
    return value, battles


@dataclass(frozen=True, eq=False)
class PeerRankBatch:
    """The fixed point of several data sets at once (e.g. bootstrap rounds)."""

    scores: FloatArray  # (sets, contestants); NaN without battles
    weights: FloatArray  # (sets, reviewers), each row sums to 1
    iterations: IntArray  # (sets,)
    converged: NDArray[np.bool_]  # (sets,)
    damping: FloatArray  # (sets,) 0 = plain iteration
    residual: FloatArray  # (sets,) max |f(w) - w| at the weights


def peerrank_batch(
    tensors: FloatArray,
    as_contestant: IntArray,
    *,
    tol: float = 1e-9,
    max_iter: int = 100,
    balanced: bool = False,
) -> PeerRankBatch:
    """PeerRank fixed point for a stack of win tensors (sets, R, C, C).

    With `balanced`, scores are opponent-balanced (`_balanced_scores`), the
    weights iterated on them too.
    """
    sets, n_reviewers = tensors.shape[0], tensors.shape[1]
    value, battles = _value_and_battles(tensors)
    imputed = imputed_rates(tensors) if balanced else None

    def scores(index: IntArray | slice, weights: FloatArray) -> FloatArray:
        if imputed is not None:
            return _balanced_scores(tensors[index], weights, imputed[index])
        return _scores(value[index], battles[index], weights)

    def update(index: IntArray, weights: FloatArray) -> FloatArray:
        return weights_from_scores(scores(index, weights), as_contestant)

    fixed = solve_weights(update, sets, n_reviewers, tol=tol, max_iter=max_iter)
    return PeerRankBatch(
        scores(slice(None), fixed.weights),
        fixed.weights,
        fixed.iterations,
        fixed.converged,
        fixed.damping,
        fixed.residual,
    )


@dataclass(frozen=True, eq=False)
class PeerRankResult:
    """Plain and PeerRank-weighted win rates with the reviewer weights."""

    win_rate: FloatArray  # equal weights (the paper's "All"); NaN without battles
    weighted_win_rate: FloatArray  # at the fixed point ("All (Weighted)")
    weights: FloatArray  # per reviewer, sum 1
    iterations: int
    converged: bool
    damping: float = 0.0  # share of the old weights kept by the last update (0: plain)
    residual: float = 0.0  # max |f(w) - w| at the weights


def equal_win_rates(tensors: FloatArray, *, balanced: bool = False) -> FloatArray:
    """Win rates with equal reviewer weights for a stack of win tensors (sets, R, C, C)."""
    equal = np.full(tensors.shape[:2], 1.0 / max(tensors.shape[1], 1))
    if balanced:
        return _balanced_scores(tensors, equal, imputed_rates(tensors))
    value, battles = _value_and_battles(tensors)
    return _scores(value, battles, equal)


def weighted_win_rates(
    tensors: FloatArray, weights: FloatArray, *, balanced: bool = False
) -> FloatArray:
    """Weighted win rates (sets, C) of win tensors (sets, R, C, C) at given weights (sets, R).

    The weighted mean of `peerrank` (or, with `balanced`, the mean over
    opponents of the per-pair rates) at weights that are not iterated.
    """
    if balanced:
        return _balanced_scores(tensors, weights, imputed_rates(tensors))
    value, battles = _value_and_battles(tensors)
    return _scores(value, battles, weights)


def peerrank(
    tallies: Tallies,
    *,
    tol: float = 1e-9,
    max_iter: int = 100,
    weighted: bool = True,
    balanced: bool = False,
) -> PeerRankResult:
    """Win rates and the PeerRank weighted-win-rate fixed point of one review set.

    With `weighted=False` the weights stay equal (`--weights equal`): the
    weighted win rate is then the plain one. With `balanced`, every win rate
    is the mean over opponents of the per-pair rates (a sampled design).
    """
    rs = tallies.reviews
    tensor = tallies.win[None]
    plain = equal_win_rates(tensor, balanced=balanced)[0]
    if not weighted:
        equal = np.full(rs.n_reviewers, 1.0 / max(rs.n_reviewers, 1))
        return PeerRankResult(plain, plain.copy(), equal, 0, True)
    batch = peerrank_batch(
        tensor, rs.reviewer_as_contestant, tol=tol, max_iter=max_iter, balanced=balanced
    )
    return PeerRankResult(
        win_rate=plain,
        weighted_win_rate=batch.scores[0],
        weights=batch.weights[0],
        iterations=int(batch.iterations[0]),
        converged=bool(batch.converged[0]),
        damping=float(batch.damping[0]),
        residual=float(batch.residual[0]),
    )
