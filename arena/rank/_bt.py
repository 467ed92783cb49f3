"""Bradley-Terry maximum likelihood on the Elo scale, with bootstrap intervals.

`P(i beats j) = 1 / (1 + 10^((R_j - R_i)/400))`, fitted on aggregated pair
counts `M[i, j]` (weighted wins of `i` over `j`, a tie half a win each way) by
damped Newton steps from zero (scipy's L-BFGS-B for a fit they leave unconverged,
or beyond 200 models); bootstrap refits start at that solution and take batched
Newton steps on the same likelihood. The MLE exists only when, inside each connected part of the
comparison graph, every model beats and is beaten along some path (the "beats"
digraph is strongly connected). Disconnected parts are fitted separately; a
part that is connected but not strongly connected (someone wins or loses
everything) gets one virtual tie per compared pair, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._numeric import expit

__all__ = [
    "ELO_PER_NAT",
    "BTFit",
    "comparison_components",
    "fit_bradley_terry",
    "fit_log_strengths",
    "pair_matrix",
]

FloatArray = NDArray[np.float64]

# Elo points per unit of natural log-odds: 400 / ln(10).
ELO_PER_NAT = 400.0 / math.log(10.0)
BASE_RATING = 1000.0
# Weight of the virtual tie added to every compared pair when the MLE would diverge.
VIRTUAL_TIE = 1.0


def pair_matrix(tensors: FloatArray, mean_normalised_weights: FloatArray) -> FloatArray:
    """Weighted pair wins `M[b, i, j]` from win tensors (b, R, C, C) and weights (b, R)."""
    out: FloatArray = np.einsum("br,brij->bij", mean_normalised_weights, tensors)
    return out


def _reach(edges: NDArray[np.bool_], start: int) -> NDArray[np.bool_]:
    """Models reachable from `start` along `edges[i, j]` (i -> j)."""
    seen = np.zeros(edges.shape[0], dtype=bool)
    seen[start] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = edges[frontier].any(axis=0) & ~seen
        seen |= frontier
    return seen


def comparison_components(pairs: FloatArray) -> list[list[int]]:
    """Connected parts of the comparison graph (models sharing a weighted battle),
    each sorted, in order of their first model."""
    c = pairs.shape[0]
    edges = (pairs + pairs.T) > 0
    placed = np.zeros(c, dtype=bool)
    parts: list[list[int]] = []
    for model in range(c):
        if placed[model]:
            continue
        part = _reach(edges, model)
        placed |= part
        parts.append(np.flatnonzero(part).tolist())
    return parts


def _strongly_connected(pairs: FloatArray) -> bool:
    """Whether every model reaches every other through 'beats' edges (i -> j: i beat j)."""
    if pairs.shape[0] == 0:
        return False
    beats = pairs > 0
    return bool(_reach(beats, 0).all() and _reach(beats.T, 0).all())


def _strongly_connected_each(pairs: FloatArray, compared: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Per stacked matrix (b, C, C): is the 'beats' digraph strongly connected?

    Fast path: when every pair compared in the full data has wins both ways,
    the digraph holds every edge of a connected graph in both directions.
    """
    out: NDArray[np.bool_] = np.asarray(((pairs > 0) | ~compared).all(axis=(1, 2)))
    for b in np.flatnonzero(~out).tolist():
        out[b] = _strongly_connected(pairs[b])
    return out


class _PairData:
    """Stacked pair matrices (b, C, C), each scaled to total 1, and their BT likelihood.

    With `M[i, j]` the wins of i over j, `N = M + M^T` and `p[i, j] =
    sigmoid(theta_i - theta_j)`, the negative log-likelihood is
    `sum M log(1 + exp(-(theta_i - theta_j)))`, its gradient
    `g_i = sum_j (N_ij p_ij - M_ij)` and its Hessian `diag(W 1) - W` with
    `W = N p (1 - p)`. A centring term `(sum theta)^2 / 2` fixes the free shift
    (it is zero at the optimum, where the mean is zero).
    """

    def __init__(self, pairs: FloatArray) -> None:
        sets, c, _ = pairs.shape
        total = pairs.sum(axis=(1, 2), keepdims=True)
        self.wins = pairs / np.where(total > 0, total, 1.0)
        self.played = self.wins + np.swapaxes(self.wins, 1, 2)
        self.won = self.wins.sum(axis=2)
        self.sets, self.c = sets, c

    def loss_and_grad(self, x: FloatArray) -> tuple[float, FloatArray]:
        """Negative log-likelihood (+ the centring term) and its gradient."""
        theta = x.reshape(self.sets, self.c)
        diff = theta[:, :, None] - theta[:, None, :]
        loss = float(np.sum(self.wins * np.logaddexp(0.0, -diff)))
        grad = (self.played * expit(diff)).sum(axis=2) - self.won
        centre = theta.sum(axis=1)
        loss += 0.5 * float(np.sum(centre**2))
        grad += centre[:, None]
        return loss, grad.ravel()

    def newton(self, theta: FloatArray, max_iter: int) -> tuple[FloatArray, NDArray[np.bool_]]:
        """Newton steps from `theta` (b, C); also says which fits converged."""
        theta = theta.copy()
        c = self.c
        diagonal = np.arange(c)
        done = np.zeros(self.sets, dtype=bool)
        active = np.arange(self.sets)
        for _ in range(max_iter):
            th = theta[active]
            played = self.played[active]
            p = expit(th[:, :, None] - th[:, None, :])
            pulled = played * p
            centre = th.sum(axis=1, keepdims=True)
            grad = pulled.sum(axis=2) - self.won[active] + centre
            curvature = pulled * (1.0 - p)
            hessian = 1.0 - curvature  # the centring term adds 1 everywhere
            hessian[:, diagonal, diagonal] += curvature.sum(axis=2)
            try:
                step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:  # a part held together by vanishing weights
                ridge = _RIDGE * np.eye(c)
                step = np.linalg.solve(hessian + ridge, grad[:, :, None])[:, :, 0]
            size = np.abs(step).max(axis=1)
            # Long steps are cut to _MAX_STEP nats: safe far from the optimum.
            step *= np.minimum(1.0, _MAX_STEP / np.maximum(size, 1e-300))[:, None]
            theta[active] = th - step
            finished = size < _NEWTON_TOL
            done[active[finished]] = True
            active = active[~finished]
            if active.size == 0:
                break
        return theta, done


# Up to this many models a fit starts with Newton steps from zero (one C x C
# solve a step); beyond, with L-BFGS-B.
_NEWTON_MODELS = 200
_MAX_STEP = 2.0
_NEWTON_TOL = 1e-10
_RIDGE = 1e-9
# Pair wins below this share of a matrix's total are rounding remnants of a
# zero weight: they count as no comparison at all.
_NEGLIGIBLE = 1e-12


def _drop_negligible(pairs: FloatArray) -> FloatArray:
    total = pairs.sum(axis=(-2, -1), keepdims=True)
    out: FloatArray = np.where(pairs > _NEGLIGIBLE * total, pairs, 0.0)
    return out


def _lbfgsb(data: _PairData, start: FloatArray) -> FloatArray:
    from scipy.optimize import minimize

    result = minimize(
        data.loss_and_grad,
        start.ravel(),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-9},
    )
    return np.asarray(result.x, dtype=np.float64).reshape(data.sets, data.c)


def fit_log_strengths(pairs: FloatArray, initial: FloatArray | None = None) -> FloatArray:
    """Mean-zero log-strengths (natural units) maximising the BT likelihood.

    `pairs` is (b, C, C), one independent fit per matrix; each matrix is scaled
    to total 1, which leaves its maximiser unchanged. Without `initial`, the
    fits run jointly in scipy's L-BFGS-B (the objective is a sum of
    independent parts), then a Newton step or two polishes them to 1e-10.
    With `initial` (bootstrap refits near a known solution), vectorised
    Newton steps do the work, and L-BFGS-B takes over any fit they leave
    unconverged.
    """
    sets, c, _ = pairs.shape
    if c == 1:
        return np.zeros((sets, 1))
    data = _PairData(pairs)
    if initial is None and c <= _NEWTON_MODELS:
        # Damped Newton from zero converges in a few steps (the likelihood is
        # concave); L-BFGS-B (scipy, loaded only then) takes over any it leaves.
        initial = np.zeros((sets, c))
    if initial is None:
        theta = _lbfgsb(data, np.zeros((sets, c)))
        theta, _ = data.newton(theta, 3)
    else:
        theta, done = data.newton(np.asarray(initial, dtype=np.float64).reshape(sets, c), 50)
        if not done.all():
            rest = _PairData(pairs[~done])
            theta[~done] = _lbfgsb(rest, theta[~done])
    centred: FloatArray = theta - theta.mean(axis=1, keepdims=True)
    return centred


def _anchor(theta: FloatArray, anchor: int | None) -> FloatArray:
    """Log-strengths (b, C) to Elo-scale ratings, anchor (or the mean) at 1000."""
    rating = theta * ELO_PER_NAT
    if anchor is None:
        shift = rating.mean(axis=1, keepdims=True)
    else:
        shift = rating[:, anchor : anchor + 1]
    out: FloatArray = rating - shift + BASE_RATING
    return out


def _virtual_ties(pairs: FloatArray, compared: NDArray[np.bool_]) -> FloatArray:
    return pairs + 0.5 * VIRTUAL_TIE * compared


@dataclass(frozen=True, eq=False)
class BTFit:
    """Bradley-Terry ratings, bootstrap intervals and how the fit was made.

    A model that lost no weighted battle (no loss, no tie) has `ci_high = inf`:
    its virtual ties keep the rating finite, but the data give no upper bound;
    likewise `ci_low = -inf` for one that won nothing. `boot_rating` holds
    every bootstrap round's ratings (rounds, C); NaN outside fitted parts.
    """

    rating: FloatArray  # (C,), NaN for a model without any weighted battle
    ci_low: FloatArray
    ci_high: FloatArray
    components: list[list[int]]  # connected parts, by model index
    regularised: list[int]  # parts (indices into components) given virtual ties
    bootstrap_rounds: int
    boot_rating: FloatArray | None = None


def fit_bradley_terry(
    pairs: FloatArray,
    *,
    anchor: int | None = None,
    bootstrap_pairs: FloatArray | None = None,
) -> BTFit:
    """Fit BT on `pairs` (C, C) and, when given, every bootstrap matrix (b, C, C).

    Ratings are anchored per connected part: `anchor` at 1000 in its own part,
    the mean at 1000 in the others. Intervals are the 2.5 / 97.5 percentiles
    of the bootstrap ratings (NaN without bootstrap).
    """
    c = pairs.shape[0]
    rating = np.full(c, np.nan)
    low = np.full(c, np.nan)
    high = np.full(c, np.nan)
    pairs = _drop_negligible(pairs)
    if bootstrap_pairs is not None:
        bootstrap_pairs = _drop_negligible(bootstrap_pairs)
    components = comparison_components(pairs)
    regularised: list[int] = []
    rounds = 0 if bootstrap_pairs is None else bootstrap_pairs.shape[0]
    boot_all = None if rounds == 0 else np.full((rounds, c), np.nan)
    for index, part in enumerate(components):
        if len(part) < 2:
            continue
        sub = pairs[np.ix_(part, part)]
        compared = (sub + sub.T) > 0
        part_anchor = part.index(anchor) if anchor is not None and anchor in part else None
        if not _strongly_connected(sub):
            regularised.append(index)
            sub = _virtual_ties(sub, compared)
        theta = fit_log_strengths(sub[None])
        rating[part] = _anchor(theta, part_anchor)[0]
        if bootstrap_pairs is None or rounds == 0:
            continue
        boot = bootstrap_pairs[:, part][:, :, part]
        broken = ~_strongly_connected_each(boot, compared)
        boot = np.where(broken[:, None, None], _virtual_ties(boot, compared), boot)
        start = np.repeat(theta, rounds, axis=0)
        boot_rating = _anchor(fit_log_strengths(boot, start), part_anchor)
        assert boot_all is not None
        boot_all[:, part] = boot_rating
        low[part] = np.percentile(boot_rating, 2.5, axis=0)
        high[part] = np.percentile(boot_rating, 97.5, axis=0)
    won, lost = pairs.sum(axis=1), pairs.sum(axis=0)
    fitted = ~np.isnan(rating) & (rounds > 0)
    high[fitted & (lost <= 0) & (won > 0)] = np.inf
    low[fitted & (won <= 0) & (lost > 0)] = -np.inf
    return BTFit(rating, low, high, components, regularised, rounds, boot_all)
