"""The stage's planner: once every answer is in, one grading call per answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from arena.config import Tournament
from arena.pipeline import AllPairsPlanner
from arena.runner import Call, CallResult, Finished, Idle, Planner, RunContext, call_columns
from arena.scheduler import CallOutcome
from arena.types import CallStatus, GenerateRequest, Message, stable_id
from tests.toystage._schema import TABLE, GradesConfig
from tests.toystage._sim import PROMPT_HEAD

STAGE = "grades"
_GRADE = re.compile(r"GRADE:\s*([1-5])")


def grade_id(answer_id: str, grader: str) -> str:
    """The grading call's id: the same answer and grader, the same id in every run."""
    return stable_id("grade", {"answer": answer_id, "grader": grader})


class GradesPlanner(Planner):
    """Grades every answer of the plan, once the all-pairs planner has them all."""

    def __init__(self, t: Tournament, base: AllPairsPlanner, cfg: GradesConfig) -> None:
        self.t, self.base, self.cfg = t, base, cfg
        self.queue: list[Call] | None = None
        self.ctx: RunContext | None = None
        self.done: set[str] = set()

    def start(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.done = ctx.log.ids(TABLE, statuses={CallStatus.OK.value, CallStatus.INVALID.value})
        ctx.stats.plan(STAGE, len(self.base.plan.answers))

    def next_call(self) -> Call | Idle:
        if self.queue is None:
            if not self.base.answers_settled:
                return Idle.LATER
            self.queue = [
                self._call(a.id, a.model)
                for a in self.base.plan.answers
                if a.id in self.base.answers
            ]
            assert self.ctx is not None
            self.ctx.stats.skip(STAGE, sum(c.id in self.done for c in self.queue))
        while self.queue:
            call = self.queue.pop(0)
            if call.id not in self.done:
                return call
        return Idle.DONE

    def on_result(self, result: CallResult) -> None:
        if result.call.table == TABLE and result.status in ("ok", "invalid"):
            self.done.add(result.call.id)

    def _call(self, answer_id: str, model: str) -> Call:
        grader = self.cfg.grader
        answer = "\n\n".join(self.base.answers[answer_id])
        provider = self.t.provider_of(grader)

        def request() -> GenerateRequest:
            prompt = f"{PROMPT_HEAD} Reply `GRADE: n`.\n\n{answer}"
            return GenerateRequest(
                model=self.t.provider_model_id(grader),
                messages=(Message("user", prompt),),
                max_tokens=self.cfg.max_tokens,
            )

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            last = outcomes[-1]
            grade: int | None = None
            if last.ok and last.result is not None:
                found = _GRADE.search(last.result.text)
                grade = None if found is None else int(found.group(1))
                status = CallStatus.OK if grade is not None else CallStatus.INVALID
            else:
                status = CallStatus.FAILED
            row = {
                "id": grade_id(answer_id, grader),
                "status": status.value,
                "error": None if status is CallStatus.OK else (last.error or "no grade"),
                "provider": provider,
                "run_id": run_id,
                **call_columns(outcomes),
                "answer_id": answer_id,
                "model": model,
                "grader": grader,
                "grade": grade,
            }
            return Finished(status, (row,))

        return Call(
            id=grade_id(answer_id, grader),
            table=TABLE,
            stage=STAGE,
            provider=provider,
            request=request,
            finish=finish,
        )
