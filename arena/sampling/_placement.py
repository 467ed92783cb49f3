"""Placing a contestant new to a ranked tournament: a search over the current order.

The tournament's current order is the BT order of the logged reviews among
the contestants that already have them. A contestant without any logged
review is new: it meets the model at the middle of the positions it may still
take (binary search: above the probe when it wins more than half of their
battles, below it otherwise), then both neighbours of the position found,
more of them while its place between them is not settled at 95%, and stops
there or when the budget (a share of the review calls all pairs
would cost for it) is spent. Every probe is a round of the sampled design,
recorded in the `sampling` table before its reviews start, and each round is
decided from the verdicts logged so far, so a resumed run continues the same
search.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.config import PlacementConfig, Tournament
from arena.pipeline import Plan, Round
from arena.sampling._adaptive import fit_design
from arena.sampling._planner import SAMPLING_TABLE, DesignSelector, SamplingBudget
from arena.store import RunLog
from arena.types import CallStatus

__all__ = ["PlacementSelector", "current_order", "placement_selector"]

IntArray = NDArray[np.int64]
PLACEMENT = "placement"  # the strategy of its rounds in the `sampling` table

_SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}


def current_order(
    log: RunLog, contestants: list[str], reviewers: list[str], exclude: str | None = None
) -> list[str]:
    """The contestants with logged verdicts, best first (BT over the logged reviews).

    `exclude`: a model left out with its battles (the one being placed).
    """
    reviews = log.read(
        "reviews", columns=["question_id", "model_a", "model_b", "reviewer", "verdict", "status"]
    )
    reviews = reviews.filter(pl.col("status") == CallStatus.OK.value)
    if exclude is not None:
        reviews = reviews.filter((pl.col("model_a") != exclude) & (pl.col("model_b") != exclude))
    if reviews.height == 0:
        return []
    seen = set(reviews["model_a"].to_list()) | set(reviews["model_b"].to_list())
    ranked = [m for m in contestants if m in seen]
    if len(ranked) < 2:
        return ranked
    judges = [r for r in reviewers if r in set(reviews["reviewer"].to_list())]
    fit = fit_design(reviews, ranked, judges or reviewers, seed=0, bootstrap=2)
    return [ranked[i] for i in np.argsort(-fit.rating, kind="stable")]


def placement_selector(t: Tournament, plan: Plan) -> PlacementSelector | None:
    """The placement of a new contestant, when `placement:` asks for a search and one is new."""
    cfg = t.config.placement
    if cfg is None or cfg.strategy != "search" or t.config.sampling.strategy != "full":
        return None
    log = RunLog(t.output_dir)
    if not (t.output_dir / "log").is_dir():
        return None
    placed = _placed_model(log, list(t.contestants))
    order = current_order(log, list(t.contestants), list(t.reviewers), exclude=placed)
    new = [placed] if placed is not None else [m for m in t.contestants if m not in order]
    if len(order) < 2 or len(new) != 1:
        return None  # nothing ranked yet, or not one new contestant: all pairs
    return PlacementSelector(t, plan, new[0], order, cfg)


def _placed_model(log: RunLog, contestants: list[str]) -> str | None:
    """The model an earlier run began to place (its rounds in the `sampling` table), if any.

    Its battles then no longer make it "new", but its search goes on from
    the same order: the order of the other contestants without it.
    """
    rows = log.read(SAMPLING_TABLE, columns=["strategy", "model_a", "model_b"])
    rows = rows.filter(pl.col("strategy") == PLACEMENT)
    if rows.height == 0:
        return None
    common = set(rows["model_a"].to_list()) | set(rows["model_b"].to_list())
    for a, b in rows.select("model_a", "model_b").iter_rows():
        common &= {a, b}
    found = [m for m in contestants if m in common]
    if len(found) == 2:
        # One probe so far: the model placed is the one with fewer logged battles
        # (its opponent met every ranked contestant).
        reviews = log.read("reviews", columns=["model_a", "model_b"])
        counts = {m: 0 for m in found}
        for a, b in reviews.select("model_a", "model_b").iter_rows():
            for m in (a, b):
                if m in counts:
                    counts[m] += 1
        found = [min(found, key=lambda m: counts[m])]
    return found[0] if len(found) == 1 else None


class PlacementSelector(DesignSelector):
    """One new contestant against probes of the current order (`placement: search`)."""

    def __init__(
        self, t: Tournament, plan: Plan, new: str, order: list[str], cfg: PlacementConfig
    ) -> None:
        super().__init__(t, plan)
        d = self.design
        self.new = new
        self.order = order
        self.new_index = d.contestants.index(new)
        grid = d.grid
        per_pair = grid.n_questions * grid.n_reviewers
        full_units = per_pair * len(order)  # all pairs for the new model
        if isinstance(cfg.budget, float):
            units = math.floor(cfg.budget * full_units + 1e-9)
        else:
            units = cfg.budget // 2
        units = max(1, min(units, full_units))
        probes = math.ceil(math.log2(len(order) + 1)) + 1
        per = per_pair if cfg.per_opponent is None else cfg.per_opponent // 2
        if cfg.per_opponent is None:
            per = max(1, min(per_pair, units // probes))
        self.per_opponent = min(per, per_pair)
        self.budget = SamplingBudget(PLACEMENT, len(plan.reviews), 2 * units, units, units, 0)
        self.full_units = full_units
        first, second = grid.pair_members()
        self._pair_of_opponent: dict[str, int] = {}
        for k, (i, j) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
            if self.new_index in (i, j):
                other = j if i == self.new_index else i
                self._pair_of_opponent[d.contestants[other]] = k
        self.position: tuple[int, int] = (0, len(order))

    # -- the search ------------------------------------------------------------------

    def _units_of(self, opponent: str) -> IntArray:
        """The units of the new model against `opponent`, in a fixed spread order.

        Questions first, reviewers rotating, so the first `per_opponent` units
        cover as many questions and reviewers as they can.
        """
        g = self.design.grid
        pair = self._pair_of_opponent[opponent]
        q = np.arange(g.n_questions * g.n_reviewers, dtype=np.int64) % g.n_questions
        k = np.arange(g.n_questions * g.n_reviewers, dtype=np.int64) // g.n_questions
        r = (q + k) % g.n_reviewers
        units = g.index(q, np.full_like(q, pair), r)
        ok = (self.design.slots[2 * units] >= 0) & (self.design.slots[2 * units + 1] >= 0)
        return units[ok]

    def score(self, opponent: str) -> tuple[float, int]:
        """The new model's mean score against `opponent` (1 win, 0.5 tie) and its verdicts."""
        d = self.design
        units = self._units_of(opponent)
        total, n = 0.0, 0
        for unit in units[d.selected[units]].tolist():
            for call in d.pair_of(unit):
                verdict = self._verdicts.get(call.id)
                if verdict not in _SCORE:
                    continue
                value = _SCORE[verdict]
                total += value if call.model_a == self.new else 1.0 - value
                n += 1
        return (total / n if n else 0.5), n

    def _probed(self, opponent: str) -> bool:
        units = self._units_of(opponent)
        return int(self.design.selected[units].sum()) >= min(self.per_opponent, units.size)

    def _next_round(self) -> list[Round]:
        d = self.design
        left = self.budget.units - int(d.selected.sum())
        lo, hi = 0, len(self.order)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = self.order[mid]
            if not self._probed(probe):
                return self._probe(probe, left)
            if self.score(probe)[0] > 0.5:
                hi = mid
            else:
                lo = mid + 1
        self.position = (lo, lo)
        neighbours = self.order[max(lo - 1, 0) : lo + 1]
        for neighbour in neighbours:
            if not self._probed(neighbour):
                return self._probe(neighbour, left)
        # Then more battles against a neighbour the new model is not yet told apart
        # from (its score within 1.96 binomial standard errors of one half), until
        # its place between them is settled, their battles run out, or the budget does.
        for neighbour in neighbours:
            share, n = self.score(neighbour)
            units = self._units_of(neighbour)
            more = bool((~self.design.selected[units]).any())
            if more and n and abs(share - 0.5) < 1.96 * math.sqrt(0.25 / n):
                return self._probe(neighbour, left)
        return [self._close_plan()]

    def _probe(self, opponent: str, left: int) -> list[Round]:
        if left <= 0:
            self.stopped_early = True
            return [self._close_plan()]
        units = self._units_of(opponent)
        todo = units[~self.design.selected[units]][: min(self.per_opponent, left)]
        if todo.size == 0:
            return [self._close_plan()]
        return [self._select(self._round + 1, todo)]

    def report(self) -> dict[str, Any]:
        out = super().report()
        out["placement"] = {
            "model": self.new,
            "position": self.position[0] + 1,
            "opponents": [m for m in self.order if self.score(m)[1] > 0],
            "all_pairs_review_calls": 2 * self.full_units,
        }
        return out
