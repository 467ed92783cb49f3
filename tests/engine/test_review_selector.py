"""A review selector decides which reviews the all-pairs planner asks for, through the runner."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from arena.config import Tournament, load_tournament
from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector, Round, Selection, build_plan
from arena.runner import Call, CallResult, Finished, Planner, RunContext, RunSummary
from arena.session import run_planners, tournament_setup
from arena.store import RunLog
from arena.types import CallStatus
from tests.conftest import small_tournament


class Baseline(ReviewSelector):
    """Every contestant against one baseline model: all of its reviews at the start."""

    def __init__(self, plan: Plan, baseline: str) -> None:
        self.indices = [i for i, r in enumerate(plan.reviews) if baseline in (r.model_a, r.model_b)]
        self.plan = plan

    def start(self, ctx: RunContext) -> Selection:
        done = ctx.log.ids("reviews", statuses={"ok", "invalid"})
        todo = [i for i in self.indices if self.plan.reviews[i].id not in done]
        return Selection(len(self.indices), len(self.indices) - len(todo), [Round(todo)])


class NewModel(ReviewSelector):
    """A new model against chosen opponents, one opponent a round, each round recorded first."""

    def __init__(self, plan: Plan, new: str, opponents: Sequence[str]) -> None:
        self.plan = plan
        self.rounds = [
            [i for i, r in enumerate(plan.reviews) if {r.model_a, r.model_b} == {new, opponent}]
            for opponent in opponents
        ]
        self.open: set[str] = set()
        self.records: list[str] = []

    def start(self, ctx: RunContext) -> Selection:
        planned = sum(len(r) for r in self.rounds)
        return Selection(planned, 0, [self._next()])

    def on_result(self, result: CallResult) -> list[Round]:
        self.open.discard(result.call.id)
        if result.call.table == "reviews" and not self.open:
            return [self._next()]
        return []

    def _next(self) -> Round:
        if not self.rounds:
            return Round(planned=0)
        indices = self.rounds.pop(0)
        self.open = {self.plan.reviews[i].id for i in indices}
        rid = f"round-{len(self.records)}"
        self.records.append(rid)
        row = {"id": rid, "status": "ok", "question_id": "", "model": "", "answer_turns": []}

        def finish(_outcomes: object, _run_id: str) -> Finished:
            return Finished(CallStatus.OK, (row,))

        record = Call(rid, "answers", "rounds", "", None, finish)
        return Round(indices, record)


def _run(t: Tournament, planners: list[Planner]) -> RunSummary:
    return asyncio.run(run_planners(planners, tournament_setup(t)))


def test_a_baseline_selector_asks_only_the_baseline_battles(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=4, questions=2))
    plan = build_plan(t)
    selector = Baseline(plan, "m0")
    summary = _run(t, [AllPairsPlanner(t, plan, selector)])
    reviews = RunLog(t.output_dir).read("reviews")
    assert reviews.height == len(selector.indices) == 2 * 3 * 2 * len(t.reviewers)
    assert all("m0" in (a, b) for a, b in reviews.select("model_a", "model_b").iter_rows())
    assert summary.by_stage["reviews"] == {"completed": reviews.height}
    assert summary.pending == 0
    # A second run finds them logged: counted skipped, nothing asked again.
    again = _run(t, [AllPairsPlanner(t, plan, Baseline(plan, "m0"))])
    assert again.by_stage["reviews"] == {"skipped": reviews.height}


def test_a_new_model_selector_adds_rounds_that_wait_on_their_record(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=4, questions=2))
    plan = build_plan(t)
    selector = NewModel(plan, "m3", ["m1", "m0"])
    base = AllPairsPlanner(t, plan, selector)
    summary = _run(t, [base])
    log = RunLog(t.output_dir)
    reviews = log.read_all("reviews")
    pairs = [frozenset(p) for p in reviews.select("model_a", "model_b").iter_rows()]
    n = 2 * 2 * len(t.reviewers)  # both orders, two questions, every reviewer
    # The rounds ran in order: every m1 battle was logged before any m0 battle.
    assert pairs == [frozenset({"m3", "m1"})] * n + [frozenset({"m3", "m0"})] * n
    records = log.read("answers").filter(log.read("answers")["id"].str.starts_with("round-"))
    assert sorted(records["id"].to_list()) == ["round-0", "round-1"]
    assert summary.by_stage["reviews"] == {"completed": 2 * n}
    assert summary.pending == 0 and base.settled
