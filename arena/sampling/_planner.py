"""The sampled tournament as a review selector: the reviews a design selects.

`DesignSelector` tells the all-pairs planner (every answer; a review as soon
as its two answers are logged) which reviews to ask for, instead of the full
plan: `uniform` selects its units once, `adaptive` in rounds, each round
chosen from the verdicts of the rounds before it. Each round's units are
written to the `sampling` table by a record call before any of their reviews
starts (the reviews wait on it), so a resumed run finishes the round under
way and selects the next ones exactly as an uninterrupted run would.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.config import SamplingConfig, Tournament
from arena.pipeline import Plan, ReviewCall, ReviewSelector, Round, Selection
from arena.runner import Call, CallResult, Finished, Priority, RunContext
from arena.sampling._adaptive import DesignFit, select_round
from arena.sampling._design import Grid
from arena.sampling._schema import SAMPLING_TABLE
from arena.types import CallStatus, stable_id

__all__ = [
    "SAMPLING_TABLE",
    "BaselineSelector",
    "DesignSelector",
    "SamplingBudget",
    "baseline_review_calls",
    "sampling_budget",
]


_DONE = (CallStatus.OK.value, CallStatus.INVALID.value, CallStatus.FAILED.value)
_VERDICT = (CallStatus.OK.value, CallStatus.INVALID.value)

_REVIEW_COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict")
_EMPTY_REVIEWS = pl.DataFrame(schema={k: pl.String for k in _REVIEW_COLUMNS})

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class SamplingBudget:
    """What a sampled design may spend, in review calls and units (two calls each)."""

    strategy: str
    full_calls: int
    budget_calls: int
    units: int  # budget in units
    seed_units: int  # the seed round (adaptive) or everything (uniform)
    round_units: int  # each later round (adaptive)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "full_review_calls": self.full_calls,
            "budget_review_calls": self.budget_calls,
        }


def baseline_review_calls(plan: Plan, baseline: str) -> int:
    """Review calls of the plan with `baseline` on either side (the baseline design)."""
    return sum(1 for call in plan.reviews if baseline in (call.model_a, call.model_b))


def sampling_budget(
    cfg: SamplingConfig, full_calls: int, baseline_calls: int | None = None
) -> SamplingBudget:
    """The budget of a design over a full plan of `full_calls` review calls.

    The baseline design spends `baseline_calls` (`baseline_review_calls`): every
    battle of a contestant against the baseline, in one round.
    """
    if cfg.strategy == "baseline":
        calls = full_calls if baseline_calls is None else baseline_calls
        return SamplingBudget("baseline", full_calls, calls, calls // 2, calls // 2, 0)
    if cfg.strategy == "full" or cfg.budget is None:
        return SamplingBudget("full", full_calls, full_calls, full_calls // 2, 0, 0)
    if isinstance(cfg.budget, float):
        calls = math.floor(cfg.budget * full_calls + 1e-9)
    else:
        calls = int(cfg.budget)
    units = min(calls // 2, full_calls // 2)
    if cfg.strategy == "uniform":
        return SamplingBudget("uniform", full_calls, 2 * units, units, units, 0)
    seed = min(units, max(1, math.ceil(cfg.seed_share * units)))
    per_round = math.ceil((units - seed) / cfg.rounds) if units > seed else 0
    return SamplingBudget("adaptive", full_calls, 2 * units, units, seed, per_round)


class _Design:
    """The full plan's reviews as a grid of units, with what is selected and judged."""

    def __init__(self, t: Tournament, plan: Plan) -> None:
        self.contestants = list(t.contestants)
        self.reviewers = list(t.reviewers)
        position = {m: i for i, m in enumerate(self.contestants)}
        reviewer_index = {r: i for i, r in enumerate(self.reviewers)}
        questions: dict[str, int] = {}
        for call in plan.reviews:
            questions.setdefault(call.question.id, len(questions))
        self.question_ids = list(questions)
        self.grid = Grid(len(questions), len(self.contestants), len(self.reviewers))
        c = len(self.contestants)
        pair_index = {}
        for k, (i, j) in enumerate(self.grid.pairs):
            pair_index[i * c + j] = k
        # Two review calls per unit: slot 0 shows the pair's first model as A.
        # Each slot holds the review's index in the plan (-1: not in the plan).
        self.plan = plan
        self.slots: NDArray[np.int64] = np.full(2 * self.grid.size, -1, dtype=np.int64)
        self.unit_of_review: dict[str, int] = {}
        for index, call in enumerate(plan.reviews):
            a, b = position[call.model_a], position[call.model_b]
            lo, hi = min(a, b), max(a, b)
            unit = (
                questions[call.question.id] * self.grid.n_pairs + pair_index[lo * c + hi]
            ) * self.grid.n_reviewers + reviewer_index[call.reviewer]
            self.slots[2 * unit + (0 if a < b else 1)] = index
            self.unit_of_review[call.id] = unit
        self.selected: BoolArray = np.zeros(self.grid.size, dtype=np.bool_)

    def pair_of(self, unit: int) -> tuple[ReviewCall, ReviewCall]:
        """The two review calls of a unit (both orders)."""
        return (
            self.plan.reviews[int(self.slots[2 * unit])],
            self.plan.reviews[int(self.slots[2 * unit + 1])],
        )

    def complete(self, unit: int) -> bool:
        """Whether both review calls of a unit are in the plan."""
        return bool(self.slots[2 * unit] >= 0 and self.slots[2 * unit + 1] >= 0)

    def unit_id(self, unit: int) -> str:
        ab, ba = self.pair_of(unit)
        return stable_id("unit", [ab.id, ba.id])


class DesignSelector(ReviewSelector):
    """The reviews of a `uniform` or `adaptive` design, round by round (every answer is asked)."""

    def __init__(self, t: Tournament, plan: Plan) -> None:
        self.t = t
        self.plan = plan
        self.cfg = t.config.sampling
        self.design = _Design(t, plan)
        self.budget = sampling_budget(self.cfg, len(plan.reviews))
        self._ctx: RunContext | None = None
        self._outstanding: set[str] = set()  # review ids of the open round without a result
        self._verdicts: dict[str, str] = {}  # review id -> verdict, selected reviews
        self._done: set[str] = set()  # selected review ids with a logged result
        # Per reviewer: USD and count of its billed reviews (`reviewers: per_dollar`).
        self._spent: dict[str, list[float]] = {}
        self._round = -1  # the last round selected
        self._halted = False  # a review of the open round could not end in this run
        self.stopped_early = False
        self.last_fit: DesignFit | None = None
        self.separation_fit: DesignFit | None = None

    # -- the selector hooks --------------------------------------------------------

    def start(self, ctx: RunContext) -> Selection:
        self._ctx = ctx
        d = self.design
        frame = ctx.log.read(
            SAMPLING_TABLE, columns=["round", "round_id", "review_ab_id", "review_ba_id"]
        )
        rounds: dict[int, str] = {}
        for _, rnd, round_id, ab, ba in frame.iter_rows():
            unit = d.unit_of_review.get(ab)
            if unit is None or d.unit_of_review.get(ba) != unit:
                continue  # stale: the answers or the reviewer changed
            d.selected[unit] = True
            self._round = max(self._round, int(rnd))
            rounds[int(rnd)] = round_id
        ctx.mark_logged(list(rounds.values()))
        reviews = ctx.log.read("reviews", columns=["status", "verdict", "reviewer", "cost_usd"])
        reviews = reviews.filter(pl.col("status").is_in(_DONE))
        for rid, status, verdict, reviewer, cost in reviews.iter_rows():
            if rid in d.unit_of_review:
                self._done.add(rid)
                self._bill(reviewer, cost)
                if status in _VERDICT and verdict is not None:
                    self._verdicts[rid] = verdict
        planned = min(self.budget.budget_calls, len(self.plan.reviews))
        skipped = 0
        first: list[int] = []
        retry: list[int] = []
        for unit in np.flatnonzero(d.selected).tolist():
            for slot, call in zip((2 * unit, 2 * unit + 1), d.pair_of(unit), strict=True):
                if call.id in self._verdicts:
                    skipped += 1
                elif call.id in self._done:
                    retry.append(int(d.slots[slot]))  # failed earlier: asked again, after selecting
                else:
                    self._outstanding.add(call.id)
                    first.append(int(d.slots[slot]))
        opening = [Round(first)]
        if not self._outstanding:
            opening.extend(self._next_round())
        opening.append(Round(retry))
        return Selection(max(planned, 2 * int(d.selected.sum())), skipped, opening)

    def on_result(self, result: CallResult) -> list[Round]:
        call = result.call
        if call.table == "answers" and result.status in ("failed", "pending"):
            self._halted = self._halted or bool(self._outstanding)
            return []
        if call.table != "reviews" or call.id not in self.design.unit_of_review:
            return []
        if result.status == "pending":
            self._halted = True
            return []
        self._done.add(call.id)
        row = result.row
        if row is not None:
            self._bill(row.get("reviewer"), row.get("cost_usd"))
        if result.status in ("ok", "invalid") and row is not None and row.get("verdict"):
            self._verdicts[call.id] = row["verdict"]
        if call.id in self._outstanding:
            self._outstanding.discard(call.id)
            if not self._outstanding and not self._halted and not self._ctx_stopped():
                return self._next_round()
        return []

    # -- rounds ----------------------------------------------------------------------

    def _bill(self, reviewer: str | None, cost: float | None) -> None:
        if reviewer is not None and cost is not None and cost == cost:
            spent = self._spent.setdefault(reviewer, [0.0, 0.0])
            spent[0] += float(cost)
            spent[1] += 1.0

    def _reviewer_cost(self) -> FloatArray | None:
        """Per reviewer of the design, the mean USD of its reviews so far (those without
        any: the mean of the others), or None when nothing was billed or the design
        does not choose reviewers by cost."""
        if self.cfg.reviewers != "per_dollar":
            return None
        means = [
            spent[0] / spent[1] if spent[1] else math.nan
            for spent in (self._spent.get(r, [0.0, 0.0]) for r in self.design.reviewers)
        ]
        known = [m for m in means if m == m]
        if not known or max(known) <= 0:
            return None
        fill = sum(known) / len(known)
        return np.array([m if m == m else fill for m in means], dtype=np.float64)

    def _ctx_stopped(self) -> bool:
        return self._ctx is not None and self._ctx.stopped

    def _rng(self, round_: int) -> np.random.Generator:
        return np.random.default_rng([self.t.config.seed, round_, 0x5A3B])

    def _next_round(self) -> list[Round]:
        """The next round (if any budget is left), or the end of the design."""
        d = self.design
        spent = int(d.selected.sum())
        left = self.budget.units - spent
        if left <= 0 or self.stopped_early:
            return [self._close_plan()]
        round_ = self._round + 1
        choice = select_round(
            d.grid,
            d.selected,
            self._reviews_so_far() if spent else _EMPTY_REVIEWS,
            d.contestants,
            d.reviewers,
            left=left,
            seed_units=self.budget.seed_units,
            round_units=self.budget.round_units,
            adaptive=self.budget.strategy == "adaptive",
            rng=self._rng(round_),
            fit_seed=self.t.config.seed * 1_000 + round_,
            stop_when_separated=self.cfg.stop_when_separated,
            align=self.cfg.align == "cache",
            reviewer_cost=self._reviewer_cost(),
        )
        if choice.separation is not None:
            self.separation_fit = choice.separation
        if choice.fit is not None:
            self.last_fit = choice.fit
        if choice.stopped:
            self.stopped_early = True
        if choice.units.size == 0:
            return [self._close_plan()]
        return [self._select(round_, choice.units)]

    def _reviews_so_far(self) -> pl.DataFrame:
        """The verdicts of the selected units, in the log's columns."""
        d = self.design
        rows: dict[str, list[str]] = {k: [] for k in _REVIEW_COLUMNS}
        for unit in np.flatnonzero(d.selected).tolist():
            for call in d.pair_of(unit):
                verdict = self._verdicts.get(call.id)
                if verdict is None:
                    continue
                rows["question_id"].append(call.question.id)
                rows["model_a"].append(call.model_a)
                rows["model_b"].append(call.model_b)
                rows["reviewer"].append(call.reviewer)
                rows["verdict"].append(verdict)
        return pl.DataFrame(rows, schema={k: pl.String for k in rows})

    def _select(self, round_: int, units: IntArray) -> Round:
        """The round's units: their record (a row each) and their reviews, which wait on it."""
        d = self.design
        unit_list = [u for u in units.tolist() if d.complete(u)]
        if not unit_list:
            return self._close_plan()
        self._round = round_
        run_id = self._ctx.run_id if self._ctx is not None else ""
        round_id = stable_id("sampling-round", [round_, d.unit_id(unit_list[0]), len(unit_list)])
        now = time.time()
        rows: list[dict[str, Any]] = []
        q, p, r = d.grid.split(np.array(unit_list, dtype=np.int64))
        pairs = d.grid.pairs
        for k, unit in enumerate(unit_list):
            ab, ba = d.pair_of(unit)
            i, j = pairs[int(p[k])]
            rows.append(
                {
                    "id": d.unit_id(unit),
                    "round": round_,
                    "round_id": round_id,
                    "strategy": self.budget.strategy,
                    "question_id": d.question_ids[int(q[k])],
                    "model_a": d.contestants[i],
                    "model_b": d.contestants[j],
                    "reviewer": d.reviewers[int(r[k])],
                    "review_ab_id": ab.id,
                    "review_ba_id": ba.id,
                    "selected_at": now,
                    "run_id": run_id,
                }
            )
        record_rows = tuple(rows)

        def finish(_outcomes: Any, _run_id: str) -> Finished:
            return Finished(CallStatus.OK, record_rows)

        record = Call(
            id=round_id,
            table=SAMPLING_TABLE,
            stage="sampling",
            provider="",
            request=None,
            finish=finish,
            priority=Priority.REVIEW,
        )
        reviews: list[int] = []
        for unit in unit_list:
            d.selected[unit] = True
            for slot, call in zip((2 * unit, 2 * unit + 1), d.pair_of(unit), strict=True):
                self._outstanding.add(call.id)
                reviews.append(int(d.slots[slot]))
        return Round(reviews, record)

    def _close_plan(self) -> Round:
        """No more rounds: the planned review count shrinks to what was selected."""
        return Round(planned=2 * int(self.design.selected.sum()))

    # -- what the run reports ---------------------------------------------------------

    def report(self) -> dict[str, Any]:
        """Strategy, budget, calls selected and judged, rounds, separation of neighbours."""
        d = self.design
        out: dict[str, Any] = self.budget.to_json()
        out["selected_review_calls"] = 2 * int(d.selected.sum())
        out["judged_review_calls"] = len(self._done)
        out["rounds"] = self._round + 1
        out["stopped_when_separated"] = self.stopped_early
        fit = self.separation_fit
        if fit is not None:
            out["neighbours"] = [
                {
                    "upper": d.contestants[u],
                    "lower": d.contestants[low],
                    "p_upper_above": round(p, 4),
                    "separated": sep,
                }
                for u, low, p, sep in fit.neighbours()
            ]
        return out


class BaselineSelector(DesignSelector):
    """The baseline design: every contestant against one baseline, nothing else.

    Every unit whose pair holds the baseline (every question, every reviewer,
    both orders) is selected in one round and recorded in the `sampling` table
    like a sampled design's round, so `arena leaderboard` knows the design and
    its baseline. Reviews grow linearly with the number of contestants:
    `(C - 1) x 2 x questions x reviewers`. A later run whose plan grew (a new
    question, contestant or reviewer) selects the new baseline units in a new
    round.
    """

    def __init__(self, t: Tournament, plan: Plan) -> None:
        super().__init__(t, plan)
        baseline = self.cfg.baseline
        if baseline is None or baseline not in self.design.contestants:
            raise ValueError(f"sampling.baseline {baseline!r} is not a contestant")
        self.baseline = baseline
        d = self.design
        b = d.contestants.index(baseline)
        first, second = d.grid.pair_members()
        pairs = np.flatnonzero((first == b) | (second == b))
        q = np.repeat(
            np.arange(d.grid.n_questions, dtype=np.int64), pairs.size * d.grid.n_reviewers
        )
        p = np.tile(np.repeat(pairs, d.grid.n_reviewers), d.grid.n_questions)
        r = np.tile(np.arange(d.grid.n_reviewers, dtype=np.int64), d.grid.n_questions * pairs.size)
        units = np.sort(d.grid.index(q, p, r))
        complete = (d.slots[2 * units] >= 0) & (d.slots[2 * units + 1] >= 0)
        self.units: IntArray = units[complete]
        self.budget = sampling_budget(self.cfg, len(plan.reviews), 2 * int(self.units.size))

    def _next_round(self) -> list[Round]:
        todo = self.units[~self.design.selected[self.units]]
        if todo.size == 0:
            return [self._close_plan()]
        return [self._select(self._round + 1, todo)]

    def report(self) -> dict[str, Any]:
        out = super().report()
        out["baseline"] = self.baseline
        return out
