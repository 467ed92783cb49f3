"""Ready reviews go out in plan order, however they became ready (prefix caches need it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.config import load_tournament
from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector, Round, Selection, build_plan
from arena.runner import RunContext
from arena.session import run_planners, tournament_setup
from arena.store import RunLog
from tests.conftest import small_tournament


class Scrambled(ReviewSelector):
    """Every review of the plan in one round, in an order far from the plan's."""

    def __init__(self, plan: Plan) -> None:
        n = len(plan.reviews)
        self.order = [(7 * i) % n for i in range(n)][::-1]  # 7 is prime to n below

    def start(self, ctx: RunContext) -> Selection:
        return Selection(len(self.order), 0, [Round(self.order)])


def _sent_order(out: Path) -> list[str]:
    reviews = RunLog(out).read("reviews", columns=["started_at"])
    return reviews.sort("started_at")["id"].to_list()


def test_a_rounds_reviews_go_out_grouped_by_question_and_first_answer(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=4, questions=2))
    plan = build_plan(t)
    assert len(plan.reviews) % 7
    # One call at a time, so the log's start times are the order the planner handed them out.
    summary = asyncio.run(
        run_planners([AllPairsPlanner(t, plan, Scrambled(plan))], tournament_setup(t), window=1)
    )
    assert summary.completed == len(plan.answers) + len(plan.reviews)
    sent = _sent_order(t.output_dir)
    assert sent == [r.id for r in plan.reviews]
    # Per reviewer, the reviews showing the same answer first (a shared prompt
    # prefix) are consecutive, and both orders of every pair were made.
    by_id = {r.id: r for r in plan.reviews}
    for reviewer in t.reviewers:
        firsts = [
            (by_id[i].question.id, by_id[i].model_a) for i in sent if by_id[i].reviewer == reviewer
        ]
        runs = [k for n, k in enumerate(firsts) if n == 0 or firsts[n - 1] != k]
        assert len(runs) == len(set(firsts))
        pairs = {(by_id[i].question.id, by_id[i].model_a, by_id[i].model_b) for i in sent}
        assert all((q, b, a) in pairs for q, a, b in pairs)
