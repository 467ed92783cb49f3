"""The review design of a sampled tournament: units, the full grid, balanced subsets.

A *unit* is one battle judged in both orders by one reviewer: question `q`,
the unordered pair `p = {i, j}` of contestants (`i` before `j` in the
contestants list) and reviewer `r`. It stands for the two review calls
`(q, i, j, r)` and `(q, j, i, r)`, so position bias cancels inside every unit.
The full design holds every unit once; a unit's index in the grid is
`(q * P + p) * R + r` with `P` pairs and `R` reviewers, so a design is a
boolean mask over the grid (one byte per unit, never one object per call).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["Grid", "Prefixes", "balanced_units"]

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class Grid:
    """The full design: questions x unordered contestant pairs x reviewers."""

    n_questions: int
    n_contestants: int
    n_reviewers: int

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Unordered pairs `(i, j)`, `i < j`, in a fixed order."""
        c = self.n_contestants
        return [(i, j) for i in range(c) for j in range(i + 1, c)]

    @property
    def n_pairs(self) -> int:
        c = self.n_contestants
        return c * (c - 1) // 2

    @property
    def size(self) -> int:
        """Units of the full design (half its review calls)."""
        return self.n_questions * self.n_pairs * self.n_reviewers

    def split(self, units: IntArray) -> tuple[IntArray, IntArray, IntArray]:
        """Question, pair and reviewer index of each unit index."""
        r = units % self.n_reviewers
        rest = units // self.n_reviewers
        return rest // self.n_pairs, rest % self.n_pairs, r

    def index(self, q: IntArray, p: IntArray, r: IntArray) -> IntArray:
        """Unit index of (question, pair, reviewer) indices."""
        out: IntArray = (q * self.n_pairs + p) * self.n_reviewers + r
        return out

    def pair_members(self) -> tuple[IntArray, IntArray]:
        """Contestant indices `i` and `j` of every pair, as two arrays."""
        pairs = np.array(self.pairs, dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]


def _coverage(grid: Grid, selected: BoolArray) -> NDArray[np.int64]:
    """Units already chosen per (pair, question): shape (P, Q)."""
    q, p, _ = grid.split(np.flatnonzero(selected))
    out = np.zeros((grid.n_pairs, grid.n_questions), dtype=np.int64)
    np.add.at(out, (p, q), 1)
    return out


def pick_in_pair(
    grid: Grid,
    selected: BoolArray,
    pair: int,
    n: int,
    reviewer_weight: NDArray[np.float64],
    rng: np.random.Generator,
    coverage: NDArray[np.int64] | None = None,
    share: NDArray[np.float64] | None = None,
    shown: Prefixes | None = None,
) -> IntArray:
    """Choose up to `n` unselected units of one pair.

    Questions the pair has been judged on least come first (the full
    tournament's order rests on every question's answers, so covering more
    questions matters more than judging one question again); then reviewers
    that judged the pair least (a mix of reviewers like the full design's);
    ties go to reviewers drawn in proportion to `reviewer_weight` (weighted
    sampling without replacement, Efraimidis-Spirakis keys). Units are taken
    one level at a time, so the counts stay even as the pair fills up. With
    `share` (per reviewer, summing to 1), "judged least" is measured against
    it: reviewer `r` comes first when its count over `share[r]` is lowest, so
    the pair's units follow those shares instead of an even mix.

    With `shown` (cache-aware placement, `sampling: {align: cache}`), the
    question is steered too: among the units at the same coverage level and
    reviewer rank, those whose pair shares the most contestants with the
    reviewer's units on that question in this round come first (each shared
    contestant is a prompt prefix read again), then questions on which the
    pair's two answers have been used least (so each contestant's units stay
    spread over the questions). The picked units are recorded in `shown`. `shown=None` leaves
    the choice as it was, draw for draw.
    """
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    cover = (_coverage(grid, selected)[pair] if coverage is None else coverage[pair]).copy()
    q = np.repeat(np.arange(grid.n_questions, dtype=np.int64), grid.n_reviewers)
    r = np.tile(np.arange(grid.n_reviewers, dtype=np.int64), grid.n_questions)
    units = grid.index(q, np.full_like(q, pair), r)
    taken_mask = selected[units]
    used = np.bincount(r[taken_mask], minlength=grid.n_reviewers).astype(np.float64)
    scale = (
        np.ones(grid.n_reviewers)
        if share is None
        else 1.0 / np.maximum(share * grid.n_reviewers, 1e-9)
    )
    free = ~taken_mask
    units, q, r = units[free], q[free], r[free]
    weight = np.maximum(reviewer_weight[r], 1e-12)
    key = np.log(rng.random(units.size)) / weight  # larger is better
    out: list[int] = []
    alive = np.ones(units.size, dtype=np.bool_)
    while len(out) < n and alive.any():
        # Greedy in batches: the best free unit of each question at the lowest
        # coverage level, reviewers least used first.
        idx = np.flatnonzero(alive)
        level = cover[q[idx]]
        idx = idx[level == level.min()]
        rank = ((used + 1.0) * scale)[r[idx]]
        if shown is None:
            order = idx[np.lexsort((-key[idx], rank))]
        else:
            met, load = shown.sharing(pair, q[idx], r[idx])
            order = idx[np.lexsort((-key[idx], load, -met, rank))]
        seen_q: set[int] = set()
        seen_r: set[int] = set()
        for k in order.tolist():
            qq, rr = int(q[k]), int(r[k])
            if qq in seen_q or rr in seen_r:
                continue
            seen_q.add(qq)
            seen_r.add(rr)
            out.append(int(units[k]))
            alive[k] = False
            cover[qq] += 1
            used[rr] += 1
            if shown is not None:
                shown.add(pair, qq, rr)
            if len(out) >= n:
                break
    return np.array(out, dtype=np.int64)


def balanced_units(
    grid: Grid,
    n: int,
    rng: np.random.Generator,
    selected: BoolArray | None = None,
    *,
    pairs: IntArray | None = None,
    shown: Prefixes | None = None,
    shares: NDArray[np.float64] | None = None,
) -> IntArray:
    """About `n` new units spread evenly over pairs, then reviewers, then questions.

    The pairs (all, or those in `pairs`) are filled towards equal totals
    (ties broken at random); inside a pair, reviewers take turns in a random
    order and each takes a question the pair has been judged on least. With
    `selected`, the units already chosen are kept out and counted. With
    `shown` (see `pick_in_pair`), a reviewer's question is, among the least
    covered ones, the one whose answers it already shows most in this round.
    With `shares` (pairs x reviewers, each row summing to 1), the turns follow
    the pair's shares instead: the next turn is the reviewer whose units in
    the pair over its share are fewest.
    """
    chosen = np.zeros(grid.size, dtype=np.bool_) if selected is None else selected.copy()
    cover = _coverage(grid, chosen)
    have = cover.sum(axis=1)
    capacity = grid.n_questions * grid.n_reviewers - have
    if pairs is not None:
        allowed = np.zeros(grid.n_pairs, dtype=np.bool_)
        allowed[pairs] = True
        capacity = np.where(allowed, capacity, 0)
    n = min(n, int(capacity.sum()))
    in_play = capacity > 0
    target = (have[in_play].sum() + n) / max(int(in_play.sum()), 1)
    deficit = np.where(in_play, np.maximum(target - have, 0.0), 0.0)
    jitter = rng.random(grid.n_pairs) * 1e-6  # random tie-breaks in the remainders
    per_pair = _fill(deficit + np.where(in_play, jitter, 0.0), capacity, n)
    picked: list[IntArray] = []
    for pair in np.flatnonzero(per_pair).tolist():
        share = None if shares is None else shares[pair]
        taken = _round_robin(grid, chosen, pair, int(per_pair[pair]), rng, cover, shown, share)
        chosen[taken] = True
        picked.append(taken)
    out = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
    return np.sort(out)


def _fill(score: NDArray[np.float64], capacity: IntArray, n: int) -> IntArray:
    """Split `n` over pairs in proportion to `score`, within capacity (largest remainders)."""
    out = np.zeros(score.size, dtype=np.int64)
    left = min(n, int(capacity.sum()))
    open_ = capacity > 0
    while left > 0 and open_.any():
        s = np.where(open_, score, 0.0)
        if s.sum() <= 0:
            s = open_.astype(np.float64)
        share = s / s.sum() * left
        whole = np.floor(share).astype(np.int64)
        rest = left - int(whole.sum())
        if rest > 0:
            order = np.lexsort((np.arange(score.size), -(share - whole)))
            whole[order[:rest]] += 1
        take = np.minimum(whole, capacity - out)
        out += take
        left -= int(take.sum())
        open_ = (capacity - out) > 0
    return out


def _round_robin(
    grid: Grid,
    chosen: BoolArray,
    pair: int,
    want: int,
    rng: np.random.Generator,
    cover: NDArray[np.int64],
    shown: Prefixes | None = None,
    share: NDArray[np.float64] | None = None,
) -> IntArray:
    """`want` units of one pair: reviewers in turn, least-covered questions first (with
    `share`, per reviewer: the turn goes to the fewest units over share)."""
    taken: list[int] = []
    reviewers = rng.permutation(grid.n_reviewers)
    row = cover[pair].copy()
    base = np.arange(grid.n_questions, dtype=np.int64)
    used = full = np.zeros(0)
    if share is not None:
        q_all = np.repeat(base, grid.n_reviewers)
        r_all = np.tile(np.arange(grid.n_reviewers, dtype=np.int64), grid.n_questions)
        in_pair = chosen[grid.index(q_all, np.full_like(q_all, pair), r_all)]
        used = np.bincount(r_all[in_pair], minlength=grid.n_reviewers).astype(np.float64)
        full = np.zeros(grid.n_reviewers, dtype=np.bool_)
        tie = np.empty(grid.n_reviewers)
        tie[reviewers] = np.arange(grid.n_reviewers)  # the random order breaks ties
    stalled = 0
    k = 0
    while len(taken) < want and stalled < grid.n_reviewers:
        if share is None:
            r = int(reviewers[k % grid.n_reviewers])
        else:
            if full.all():
                break
            deficit = np.where(full, np.inf, (used + 1.0) / np.maximum(share, 1e-9))
            r = int(np.lexsort((tie, deficit))[0])
        k += 1
        units = grid.index(base, np.full_like(base, pair), np.full_like(base, r))
        free = ~chosen[units]
        if not free.any():
            stalled += 1
            if share is not None:
                full[r] = True
            continue
        stalled = 0
        if share is not None:
            used[r] += 1
        candidates = np.flatnonzero(free)
        level = row[candidates]
        best = candidates[level == level.min()]
        if shown is not None:
            met, load = shown.sharing(pair, best, np.full_like(best, r))
            first = np.lexsort((load, -met))[0]
            best = best[(met == met[first]) & (load == load[first])]
        q = int(rng.choice(best))
        unit = int(units[q])
        chosen[unit] = True
        row[q] += 1
        taken.append(unit)
        if shown is not None:
            shown.add(pair, q, r)
    cover[pair] = row
    return np.array(taken, dtype=np.int64)


@lru_cache(maxsize=16)
def _pair_list(n_contestants: int) -> list[tuple[int, int]]:
    return Grid(1, n_contestants, 1).pairs


class Prefixes:
    """What a round shows each reviewer, for cache-aware placement (`align: cache`).

    `shown[r, q, c]`: reviewer `r` has a unit on question `q` with contestant
    `c` in this round, so a review with `c`'s answer first has a prompt prefix
    (instructions, question, that answer) already sent. `load[q, c]`: units
    so far (earlier rounds included) that use contestant `c`'s answer to `q`.
    """

    def __init__(self, grid: Grid, selected: BoolArray | None = None) -> None:
        self.grid = grid
        self.pairs = _pair_list(grid.n_contestants)
        self.shown = np.zeros(
            (grid.n_reviewers, grid.n_questions, grid.n_contestants), dtype=np.bool_
        )
        self.load = np.zeros((grid.n_questions, grid.n_contestants), dtype=np.int64)
        if selected is not None and selected.any():
            q, p, _ = grid.split(np.flatnonzero(selected))
            i, j = grid.pair_members()
            np.add.at(self.load, (q, i[p]), 1)
            np.add.at(self.load, (q, j[p]), 1)

    def sharing(self, pair: int, q: IntArray, r: IntArray) -> tuple[IntArray, IntArray]:
        """Per candidate (q, r) of `pair`: contestants of the pair reviewer `r`
        already shows on `q` (0-2), and the load of the pair's two answers to `q`."""
        i, j = self.pairs[pair]
        met: IntArray = self.shown[r, q, i].astype(np.int64) + self.shown[r, q, j].astype(np.int64)
        load: IntArray = self.load[q, i] + self.load[q, j]
        return met, load

    def add(self, pair: int, q: int, r: int) -> None:
        """Record a picked unit."""
        i, j = self.pairs[pair]
        self.shown[r, q, i] = True
        self.shown[r, q, j] = True
        self.load[q, i] += 1
        self.load[q, j] += 1
