"""The adaptive rule: after each round, spend the next reviews where the order is unsure.

`select_round` is the whole rule, a pure function of the reviews so far, the
grid of units, what the budget allows and a random generator. After the
seed round, the reviews are refitted (`fit_design`): PeerRank weights, a
weighted Bradley-Terry fit, and `p_ij`, the share of plausible full
tournaments in which `i` is rated above `j`, and each reviewer's measured
reliability (agreement with the others' per-question consensus). The next
round (`choose_round`) is half balanced (`balanced_units`) and half spent on
the pairs whose units most reduce the expected number of misordered pairs
under the Bradley-Terry information (`target_scores`); inside a pair, least
judged questions first, reviewers by reliability (`reviewer_shares`).
See docs/sampling.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.sampling._design import (
    Grid,
    Prefixes,
    _coverage,
    _fill,
    balanced_units,
    pick_in_pair,
)

if TYPE_CHECKING:
    from arena.rank import ReviewSet

__all__ = [
    "DesignFit",
    "RoundChoice",
    "allocate",
    "choose_round",
    "fit_design",
    "reviewer_reliability",
    "reviewer_shares",
    "select_round",
    "target_scores",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

# Bootstrap rounds of the selection fit (question resampling).
BOOTSTRAP = 200
# Pseudo-battles per pair, half won each way, in every bootstrap fit: keeps a
# sweep or a pair never compared finite without moving well-measured pairs.
PRIOR = 0.5
# Floor added to every pair's uncertainty when allocating a round, as a share
# of the mean uncertainty (no pair is frozen on an early, lucky estimate).
FLOOR = 0.01
# Floor added to reviewer weights when drawing reviewers (a weight-0 reviewer
# still reviews now and then, so its weight can recover).
REVIEWER_FLOOR = 0.1
# Share of every adaptive round spent as a balanced (uniform) design.
UNIFORM_SHARE = 0.5
# Steps in which the targeted part of a round is allocated (scores refreshed).
TARGET_STEPS = 4
# Reviewers' share of a pair's targeted units grows with reliability ** this.
RELIABILITY_POWER = 1.0
# `reviewers: per_dollar`: a reviewer's cost counts as at least this share of the
# mean reviewer's (a free or nearly free reviewer is not given every unit).
COST_FLOOR = 0.05


@dataclass(frozen=True, eq=False)
class DesignFit:
    """What the reviews so far say about the order, for choosing the next round."""

    rating: FloatArray  # (C,) BT ratings, Elo scale, mean 1000
    low: FloatArray  # (C,) 2.5 percentile of the bootstrap
    high: FloatArray  # (C,) 97.5 percentile
    p_above: FloatArray  # (C, C) share of bootstrap rounds with i rated above j
    weights: FloatArray  # (R,) PeerRank reviewer weights, sum 1
    battles: IntArray  # (C,) counted battles per contestant
    # (R,) agreement of each reviewer with the others' per-question consensus
    # (a correlation, clipped to [0, 1]); None: not measured.
    reliability: FloatArray | None = None
    # (R,) each reviewer's index among the contestants, -1 when it does not compete.
    reviewer_as_contestant: IntArray | None = None

    def order(self) -> list[int]:
        """Contestant indices, best first (ties by index)."""
        return sorted(range(self.rating.size), key=lambda i: (-self.rating[i], i))

    def neighbours(self) -> list[tuple[int, int, float, bool]]:
        """Adjacent pairs in rating order: (upper, lower, P(upper above), separated).

        Separated: the two 95% intervals do not overlap.
        """
        order = self.order()
        out = []
        for upper, lower in zip(order, order[1:], strict=False):
            separated = bool(self.low[upper] > self.high[lower])
            out.append((upper, lower, float(self.p_above[upper, lower]), separated))
        return out

    def all_separated(self) -> bool:
        """Whether every adjacent pair's intervals are apart."""
        return all(sep for *_, sep in self.neighbours())


def fit_design(
    reviews: pl.DataFrame,
    contestants: list[str],
    reviewers: list[str],
    *,
    seed: int = 0,
    bootstrap: int = BOOTSTRAP,
    full_units_per_pair: int | None = None,
) -> DesignFit:
    """Fit weights, BT ratings and pairwise order probabilities from `reviews`.

    `reviews` has the log's columns `question_id, model_a, model_b, reviewer,
    verdict` (and `status` when present); only the listed models count.
    Without `full_units_per_pair`, the bootstrap resamples questions: the
    intervals say how sure the order is for the question population. With it
    (units per pair in the full design), each draw completes every pair's
    unjudged units from that pair's observed results: the intervals say how
    sure the order is that the full tournament would give.
    """
    # Imported here: `arena plan` loads this module with the stage, and ranks nothing.
    from arena.rank import encode_reviews, fit_log_strengths, peerrank, tally_reviews
    from arena.rank._bt import ELO_PER_NAT

    rs = encode_reviews(reviews, contestants=contestants, reviewers=reviewers)
    c, n_r = len(contestants), len(reviewers)
    tallies = tally_reviews(rs, per_question=False)
    weights = peerrank(tallies, balanced=True).weights if rs.n_battles else np.full(n_r, 1.0 / n_r)
    mean_w = weights * n_r
    # Per-question weighted pair matrix: M[q, a, b] = weighted win value of a over b.
    value_a = (1.0 - rs.score.astype(np.float64)) / 2.0
    w = mean_w[rs.reviewer]
    q = rs.question.astype(np.int64)
    a = rs.model_a.astype(np.int64)
    b = rs.model_b.astype(np.int64)
    n_q = max(rs.n_questions, 1)
    flat = np.bincount((q * c + a) * c + b, weights=w * value_a, minlength=n_q * c * c)
    flat += np.bincount((q * c + b) * c + a, weights=w * (1.0 - value_a), minlength=n_q * c * c)
    per_question = flat.reshape(n_q, c * c)
    prior = PRIOR / 2.0 * (1.0 - np.eye(c))
    base = per_question.sum(axis=0).reshape(c, c) + prior
    rng = np.random.default_rng([seed, 0x5A3])
    theta = fit_log_strengths(base[None])[0]
    if full_units_per_pair is None:
        counts = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=bootstrap).astype(np.float64)
        boot = (counts @ per_question).reshape(bootstrap, c, c) + prior
    else:
        boot = _full_draws(rs, mean_w, c, full_units_per_pair, bootstrap, rng) + prior
    boot_theta = fit_log_strengths(boot, np.repeat(theta[None], bootstrap, axis=0))
    rating = 1000.0 + ELO_PER_NAT * (theta - theta.mean())
    boot_rating = 1000.0 + ELO_PER_NAT * (boot_theta - boot_theta.mean(axis=1, keepdims=True))
    above = (boot_rating[:, :, None] > boot_rating[:, None, :]).mean(axis=0)
    battles = np.bincount(np.concatenate([a, b]), minlength=c).astype(np.int64)
    return DesignFit(
        rating=rating,
        low=np.percentile(boot_rating, 2.5, axis=0),
        high=np.percentile(boot_rating, 97.5, axis=0),
        p_above=above,
        weights=np.asarray(weights, dtype=np.float64),
        battles=battles,
        reliability=reviewer_reliability(rs),
        reviewer_as_contestant=np.asarray(rs.reviewer_as_contestant, dtype=np.int64),
    )


def reviewer_reliability(rs: ReviewSet) -> FloatArray:
    """Each reviewer's agreement with the other reviewers, question by question.

    For a review of `(q, a, b)` the consensus is what the *other* reviewers'
    reviews on question `q` say about `a` and `b`: the sum of `a`'s signed
    results on `q` minus `b`'s (wins +1/2, losses -1/2), over every opponent.
    Answers differ most from question to question, so this is a sharp
    reference even when the two models are close overall. A reviewer's
    reliability is the correlation of its verdicts with that consensus, over
    its reviews of other models' battles (its own are left out: they measure
    self-preference, not judging), clipped to [0, 1]; a reviewer without such
    reviews gets the mean of the others.
    """
    n_r, c, n_q = rs.n_reviewers, rs.n_models, max(rs.n_questions, 1)
    if rs.n_battles == 0 or n_r == 0:
        return np.full(n_r, 1.0)
    s = -rs.score.astype(np.float64) / 2.0  # +1/2: position A won
    q = rs.question.astype(np.int64)
    a = rs.model_a.astype(np.int64)
    b = rs.model_b.astype(np.int64)
    r = rs.reviewer.astype(np.int64)
    # z[r, q, m]: reviewer r's signed results of model m on question q.
    size = n_r * n_q * c
    z = np.bincount((r * n_q + q) * c + a, weights=s, minlength=size)
    z -= np.bincount((r * n_q + q) * c + b, weights=s, minlength=size)
    z = z.reshape(n_r, n_q, c)
    others = z.sum(axis=0)[None] - z  # what everyone but r says
    pred = others[r, q, a] - others[r, q, b]
    own = rs.reviewer_as_contestant[r]
    fair = (own != a) & (own != b)
    sxy = np.bincount(r[fair], weights=(s * pred)[fair], minlength=n_r)
    sxx = np.bincount(r[fair], weights=(s * s)[fair], minlength=n_r)
    syy = np.bincount(r[fair], weights=(pred * pred)[fair], minlength=n_r)
    measured = (sxx > 0) & (syy > 0)
    corr = np.where(measured, sxy / np.sqrt(np.maximum(sxx * syy, 1e-300)), np.nan)
    corr = np.clip(corr, 0.0, 1.0)
    fill = float(np.nanmean(corr)) if measured.any() else 1.0
    out: FloatArray = np.where(measured, corr, fill)
    return out


def _full_draws(
    rs: ReviewSet,
    mean_w: FloatArray,
    c: int,
    full_units_per_pair: int,
    draws: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Pair matrices (draws, C, C) of plausible full tournaments given the reviews so far.

    Per unordered pair: the weighted mean `m` and variance `s2` of the win value
    of its first model over the reviews seen, `n` of them; the unseen reviews'
    mean is drawn from N(m, s2 / n) and the pair's full total is the seen sum
    plus that mean times the unseen weight (a finite-population draw: a pair
    judged in full has no uncertainty left).
    """
    a = rs.model_a.astype(np.int64)
    b = rs.model_b.astype(np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    first_value = np.where(a == lo, (1.0 - rs.score) / 2.0, (1.0 + rs.score) / 2.0)
    w = mean_w[rs.reviewer]
    pair = lo * c + hi
    size = c * c
    n = np.bincount(pair, minlength=size).astype(np.float64)
    sw = np.bincount(pair, weights=w, minlength=size)
    swv = np.bincount(pair, weights=w * first_value, minlength=size)
    swv2 = np.bincount(pair, weights=w * first_value**2, minlength=size)
    mean = np.where(sw > 0, swv / np.maximum(sw, 1e-300), 0.5)
    var = np.where(sw > 0, swv2 / np.maximum(sw, 1e-300) - mean**2, 0.25)
    var = np.maximum(var, 0.25 / np.maximum(n, 1.0))  # a pair seen few times stays open
    # Full pair weight: two reviews per unit at mean-normalised weight 1 on average.
    total = 2.0 * full_units_per_pair
    seen = np.minimum(sw, total)
    draw = mean + np.sqrt(var / np.maximum(n, 1.0)) * rng.standard_normal((draws, size))
    draw = np.clip(draw, 0.0, 1.0)
    first_total = swv + (total - seen) * draw  # (draws, size)
    upper = np.triu(np.ones((c, c), dtype=np.bool_), k=1).ravel()
    out = np.zeros((draws, size))
    out[:, upper] = first_total[:, upper]
    second = (total - first_total).reshape(draws, c, c).transpose(0, 2, 1).reshape(draws, size)
    lower = np.tril(np.ones((c, c), dtype=np.bool_), k=-1).ravel()
    out[:, lower] = second[:, lower]
    return out.reshape(draws, c, c)


def allocate(score: FloatArray, capacity: IntArray, n: int) -> IntArray:
    """Split `n` units over pairs in proportion to `score`, within each pair's capacity.

    Largest remainders, deterministic; what a full pair cannot take is spread
    over the others in the same proportion.
    """
    return _fill(score, capacity, n)


def choose_round(
    grid: Grid,
    selected: BoolArray,
    fit: DesignFit,
    n: int,
    rng: np.random.Generator,
    *,
    align: bool = False,
    reviewer_cost: FloatArray | None = None,
) -> IntArray:
    """The next round's `n` units (indices into the grid), given the fit so far.

    A share `UNIFORM_SHARE` of the round is balanced (`balanced_units`: it tops
    the pairs up towards equal totals, so every pair keeps meeting new
    questions); the rest goes to the pairs whose next units most reduce the
    expected number of misordered pairs (`target_scores`), in `TARGET_STEPS`
    steps. Inside a pair, reviewers are drawn towards `reviewer_shares`.
    With `align` (`sampling: {align: cache}`), the units each pair gets are
    the same, but their questions are steered so that a reviewer's units in
    the round that share a contestant land on the same question (one cached
    prefix read by several reviews; see `pick_in_pair`). With `reviewer_cost`
    (`sampling: {reviewers: per_dollar}`), the reviewers of the balanced share
    take their turns by `reviewer_shares` too, and those shares weigh
    reliability per dollar.
    """
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    shown = Prefixes(grid, selected) if align else None
    mask = selected.copy()
    picked: list[IntArray] = []
    shares = reviewer_shares(grid, fit, reviewer_cost)
    even = int(round(UNIFORM_SHARE * n))
    if even > 0:
        by_cost = None if reviewer_cost is None else shares
        units = balanced_units(grid, even, rng, mask, shown=shown, shares=by_cost)
        mask[units] = True
        picked.append(units)
    left = n - sum(int(x.size) for x in picked)
    reviewer_weight = fit.weights / max(fit.weights.max(), 1e-12) + REVIEWER_FLOOR
    per_pair_total = grid.n_questions * grid.n_reviewers
    for step in range(TARGET_STEPS):
        want = left // (TARGET_STEPS - step)
        if want <= 0:
            continue
        coverage = _coverage(grid, mask)
        have = coverage.sum(axis=1)
        capacity = per_pair_total - have
        alloc = allocate(target_scores(grid, fit, have), capacity, want)
        for pair in np.flatnonzero(alloc).tolist():
            units = pick_in_pair(
                grid,
                mask,
                pair,
                int(alloc[pair]),
                reviewer_weight,
                rng,
                coverage,
                shares[pair],
                shown=shown,
            )
            mask[units] = True
            picked.append(units)
            left -= int(units.size)
    if not picked:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate(picked))


def target_scores(grid: Grid, fit: DesignFit, have: IntArray) -> FloatArray:
    """Per pair: how much one more unit there reduces the expected misordered pairs.

    The sample's Bradley-Terry ratings have, to first order, the covariance
    `S = L^+`, `L` the information matrix of the units so far (a pair with
    `n` of its `N` units judged and win probability `p` adds
    `n p (1 - p) / (1 - n / N)`: a pair judged in full is known exactly, as
    its full-tournament result is the reference). The expected number of
    misordered pairs grows with `sum_ij u_ij Var(theta_i - theta_j)`, `u_ij =
    min(p_ij, 1 - p_ij)` the order uncertainty of the full-tournament draws.
    One more unit on pair `kl` lowers that sum by (Sherman-Morrison)
    `g sum_ij u_ij (x_ij' S x_kl)^2 / (1 + g x_kl' S x_kl)`. Every rating
    depends on all of a model's battles, so with close models every pair
    scores alike (the design stays near uniform), while pairs far apart, or
    already judged often, score little.
    """
    from arena.rank._bt import ELO_PER_NAT

    i, j = grid.pair_members()
    c = grid.n_contestants
    theta = (fit.rating - fit.rating.mean()) / ELO_PER_NAT
    prob = 1.0 / (1.0 + np.exp(-(theta[i] - theta[j])))
    info_unit = 2.0 * prob * (1.0 - prob)  # two reviews per unit
    full = float(grid.n_questions * grid.n_reviewers)
    n = have.astype(np.float64)
    remaining = np.maximum(1.0 - n / full, 1.0 / full)
    x = np.zeros((i.size, c))
    x[np.arange(i.size), i] = 1.0
    x[np.arange(i.size), j] = -1.0
    info = info_unit * n / remaining
    lap = (x * info[:, None]).T @ x + np.full((c, c), 1.0 / c)
    cov = np.linalg.pinv(lap)
    m = x @ cov @ x.T  # (P, P): covariances of the pair differences
    p_ij = fit.p_above[i, j]
    u = np.minimum(p_ij, 1.0 - p_ij)
    # The gain of one unit on pair kl: its information at the next count.
    gain = info_unit * ((n + 1.0) / np.maximum(1.0 - (n + 1.0) / full, 1.0 / full) - n / remaining)
    out: FloatArray = gain * (u @ m**2) / (1.0 + gain * np.diag(m))
    return out + FLOOR * max(float(out.mean()), 1e-300)


def reviewer_shares(
    grid: Grid, fit: DesignFit, reviewer_cost: FloatArray | None = None
) -> FloatArray:
    """Per pair, the share of its targeted units each reviewer should take (P, R).

    A pair's own models keep the share they have in the full design (`1/R`
    each), so the self-preference it carries stays as in the full tournament;
    the other reviewers share the rest in proportion to their measured
    reliability to the power `RELIABILITY_POWER`, plus a floor
    (`REVIEWER_FLOOR` of the mean), so no reviewer drops out. With
    `reviewer_cost` (what a review by each reviewer has cost so far), that
    reliability is taken per dollar: divided by the reviewer's cost over the
    mean cost (at least `COST_FLOOR` of it, so a free reviewer does not take
    every unit).
    """
    n_r = grid.n_reviewers
    rel = np.ones(n_r) if fit.reliability is None else np.asarray(fit.reliability)
    weight = np.power(np.maximum(rel, 0.0), RELIABILITY_POWER)
    if reviewer_cost is not None and float(np.mean(reviewer_cost)) > 0:
        relative = np.asarray(reviewer_cost, dtype=np.float64) / float(np.mean(reviewer_cost))
        weight = weight / np.maximum(relative, COST_FLOOR)
    weight = weight + REVIEWER_FLOOR * max(float(weight.mean()), 1e-12)
    i, j = grid.pair_members()
    out = np.tile(weight, (i.size, 1))
    own = np.zeros((i.size, n_r), dtype=np.bool_)
    if fit.reviewer_as_contestant is not None:
        as_c = np.asarray(fit.reviewer_as_contestant)
        own = (as_c[None, :] >= 0) & ((as_c[None, :] == i[:, None]) | (as_c[None, :] == j[:, None]))
    out = np.where(own, 0.0, out)
    others = out.sum(axis=1, keepdims=True)
    n_own = own.sum(axis=1, keepdims=True)
    out = out / np.maximum(others, 1e-300) * (1.0 - n_own / n_r)
    result: FloatArray = np.where(own, 1.0 / n_r, out)
    return result


@dataclass(frozen=True, eq=False)
class RoundChoice:
    """One round of a sampled design: its units and the fits it was chosen from."""

    units: IntArray  # grid indices, sorted; empty: the design is finished
    fit: DesignFit | None = None  # the full-tournament draws behind an adaptive round
    separation: DesignFit | None = None  # the question-bootstrap fit (neighbour separation)
    stopped: bool = False  # stopped because every adjacent pair is separated


def select_round(
    grid: Grid,
    selected: BoolArray,
    reviews: pl.DataFrame,
    contestants: list[str],
    reviewers: list[str],
    *,
    left: int,
    seed_units: int,
    round_units: int,
    adaptive: bool,
    rng: np.random.Generator,
    fit_seed: int,
    stop_when_separated: bool = False,
    align: bool = False,
    reviewer_cost: FloatArray | None = None,
) -> RoundChoice:
    """The next round of a design: a pure function of the reviews so far.

    `selected` marks the units already chosen (their verdicts are in
    `reviews`), `left` the units the budget still allows. The first round
    (nothing selected) and every `uniform` round is the balanced design of
    `seed_units`; pairs not yet covered (a model added since) get a balanced
    seed round of their own; otherwise the reviews are refitted and
    `choose_round` picks `round_units`. Deterministic given `rng` and `fit_seed`.
    `align` steers every round's questions towards shared cache prefixes
    (`choose_round`); the units per pair do not change. `reviewer_cost` (per
    reviewer, what its reviews have cost on average) makes the refitted rounds
    choose reviewers by reliability per dollar (`choose_round`).
    """
    empty = np.zeros(0, dtype=np.int64)
    if left <= 0:
        return RoundChoice(empty)
    shown = Prefixes(grid, selected) if align else None
    if not selected.any() or not adaptive:
        units = balanced_units(grid, min(left, seed_units), rng, selected, shown=shown)
        return RoundChoice(units)
    _, p, _ = grid.split(np.flatnonzero(selected))
    covered = np.bincount(p, minlength=grid.n_pairs) > 0
    if not covered.all():
        share = seed_units * int((~covered).sum()) / grid.n_pairs
        want = min(left, max(1, math.ceil(share)))
        units = balanced_units(
            grid, want, rng, selected, pairs=np.flatnonzero(~covered), shown=shown
        )
        return RoundChoice(units)
    separation = fit_design(reviews, contestants, reviewers, seed=fit_seed)
    if stop_when_separated and separation.all_separated():
        return RoundChoice(empty, separation=separation, stopped=True)
    per_pair = grid.n_questions * grid.n_reviewers
    fit = fit_design(reviews, contestants, reviewers, seed=fit_seed, full_units_per_pair=per_pair)
    units = choose_round(
        grid, selected, fit, min(left, round_units), rng, align=align, reviewer_cost=reviewer_cost
    )
    return RoundChoice(units, fit=fit, separation=separation)
