"""The adaptive rule: after each round, spend the next reviews where the order is unsure.

After a round, the reviews so far are refitted: PeerRank reviewer weights
(`arena.rank.peerrank`, the weighted-mean fixed point) and a weighted
Bradley-Terry fit with a bootstrap over questions. From the bootstrap, each
unordered pair `{i, j}` gets `p_ij`, the share of rounds in which `i` is
rated above `j`, and an uncertainty `u_ij = min(p_ij, 1 - p_ij)`: 0 when the
order of the pair is settled, 1/2 when it is a coin flip. Kendall tau against
the full tournament counts every pair whose order differs, so the expected
number of wrongly ordered pairs is the sum of the `u_ij`; the next round's
units go to pairs in proportion to `u_ij` (plus a small floor, so no pair is
frozen on an early, lucky estimate), inside a pair to the questions it was
judged on least and to reviewers in proportion to their PeerRank weight.
See docs/sampling.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.rank import ReviewSet, encode_reviews, fit_log_strengths, peerrank, tally_reviews
from arena.rank._bt import ELO_PER_NAT
from arena.sampling._design import Grid, _coverage, _fill, pick_in_pair

__all__ = ["DesignFit", "allocate", "choose_round", "fit_design"]

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


@dataclass(frozen=True, eq=False)
class DesignFit:
    """What the reviews so far say about the order, for choosing the next round."""

    rating: FloatArray  # (C,) BT ratings, Elo scale, mean 1000
    low: FloatArray  # (C,) 2.5 percentile of the bootstrap
    high: FloatArray  # (C,) 97.5 percentile
    p_above: FloatArray  # (C, C) share of bootstrap rounds with i rated above j
    weights: FloatArray  # (R,) PeerRank reviewer weights, sum 1
    battles: IntArray  # (C,) counted battles per contestant

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
    )


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
) -> IntArray:
    """The next round's `n` units (indices into the grid), given the fit so far.

    Units go to pairs in proportion to each pair's order uncertainty
    `min(p, 1 - p)` plus a floor of 1% of its mean.
    """
    i, j = grid.pair_members()
    p = fit.p_above[i, j]
    u = np.minimum(p, 1.0 - p)
    score = u + FLOOR * max(float(u.mean()), 1e-12)
    per_pair_total = grid.n_questions * grid.n_reviewers
    coverage = _coverage(grid, selected)
    capacity = per_pair_total - coverage.sum(axis=1)
    alloc = allocate(score, capacity, n)
    reviewer_weight = fit.weights / max(fit.weights.max(), 1e-12) + REVIEWER_FLOOR
    mask = selected.copy()
    picked: list[IntArray] = []
    for pair in np.flatnonzero(alloc).tolist():
        units = pick_in_pair(grid, mask, pair, int(alloc[pair]), reviewer_weight, rng, coverage)
        mask[units] = True
        picked.append(units)
    if not picked:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate(picked))
