"""The runner: backpressure, planners that add work in rounds, dependencies, priorities."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.config import ProviderConfig, RetryConfig, load_tournament
from arena.engine import run_tournament
from arena.pipeline import AllPairsPlanner, build_plan, make_providers
from arena.providers import Provider
from arena.runner import (
    Call,
    CallResult,
    Finished,
    Idle,
    Planner,
    Priority,
    RunContext,
    Runner,
    RunSummary,
    default_window,
)
from arena.scheduler import CallOutcome, Scheduler
from arena.store import RunLog
from arena.types import CallStatus, GenerateRequest, GenerateResult, Limits, Message, Usage
from tests.conftest import small_tournament


class Counting(Provider):
    """Echoes the prompt after a short sleep; records the most calls it saw at once."""

    def __init__(self) -> None:
        super().__init__("p", ProviderConfig(type="sim"), {}, 0)
        self.active = 0
        self.peak = 0
        self.prompts: list[str] = []

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await asyncio.sleep(0.002)
        finally:
            self.active -= 1
        prompt = request.messages[-1].content
        self.prompts.append(prompt)
        return GenerateResult(f"echo {prompt}", Usage(1, 1))


def _call(cid: str, prompt: str, after: tuple[str, ...] = ()) -> Call:
    def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
        result = outcomes[-1].result
        assert result is not None
        row = {
            "id": cid,
            "status": "ok",
            "provider": "p",
            "question_id": "q",
            "model": "m",
            "answer_turns": [result.text],
            "run_id": run_id,
        }
        return Finished(CallStatus.OK, (row,))

    return Call(
        id=cid,
        table="answers",
        stage="answers",
        provider="p",
        request=lambda: GenerateRequest("m", (Message("user", prompt),)),
        finish=finish,
        after=after,
    )


class Fixed(Planner):
    """Hands out a list of calls, then is done."""

    def __init__(self, calls: list[Call]) -> None:
        self.calls = list(calls)

    def start(self, ctx: RunContext) -> None:
        ctx.stats.plan("answers", len(self.calls))

    def next_call(self) -> Call | Idle:
        return self.calls.pop(0) if self.calls else Idle.DONE


class Rounds(Planner):
    """Round k+1 is built from round k's logged rows; `on_settled` adds a last call."""

    def __init__(self, rounds: int, width: int) -> None:
        self.rounds, self.width = rounds, width
        self.round = 0
        self.queue: list[Call] = []
        self.open: set[str] = set()
        self.texts: list[list[str]] = []
        self.said: list[str] = []  # what next_call answered, in order
        self.settled_calls = 0
        self.ctx: RunContext | None = None

    def start(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._next_round(["seed"] * self.width)

    def _next_round(self, inputs: list[str]) -> None:
        self.round += 1
        assert self.ctx is not None
        self.ctx.stats.plan("answers", len(inputs))
        for i, text in enumerate(inputs):
            call = _call(f"r{self.round}-{i}", f"{text}/{self.round}")
            self.queue.append(call)
            self.open.add(call.id)
        self.texts.append([])

    def next_call(self) -> Call | Idle:
        if self.queue:
            self.said.append("call")
            return self.queue.pop(0)
        if self.open or self.round < self.rounds or not self.settled_calls:
            self.said.append("later")  # (work is still to come from on_settled)
            return Idle.LATER
        self.said.append("done")
        return Idle.DONE

    def on_result(self, result: CallResult) -> None:
        assert result.status == "ok" and result.row is not None
        self.open.discard(result.call.id)
        self.texts[-1].append(result.row["answer_turns"][0])
        if not self.open and self.round < self.rounds:
            self._next_round(sorted(self.texts[-1]))

    def on_settled(self) -> None:
        if self.settled_calls == 0 and self.round == self.rounds:
            self.settled_calls = 1
            assert self.ctx is not None
            self.ctx.stats.plan("answers")
            self.queue.append(_call("last", "after everything"))
            self.open.add("last")


def _run(tmp: Path, planners: list[Planner], window: int) -> tuple[Runner, Any, Counting]:
    provider = Counting()
    scheduler = Scheduler({"p": provider}, {}, RetryConfig(max_attempts=1))
    log = RunLog(tmp)

    async def go() -> Any:
        async with log.writer() as writer:
            runner = Runner(planners, scheduler, writer, log, window=window)
            return runner, await runner.run()

    runner, summary = asyncio.run(go())
    return runner, summary, provider


def test_calls_in_flight_never_exceed_the_window(tmp_path: Path) -> None:
    calls = [_call(f"c{i}", f"prompt {i}") for i in range(40)]
    runner, summary, provider = _run(tmp_path, [Fixed(calls)], window=3)
    assert summary.completed == 40 and summary.pending == 0
    assert runner.max_in_flight == 3
    assert provider.peak <= 3
    assert RunLog(tmp_path).read("answers").height == 40


def test_a_planner_adds_work_in_rounds_from_logged_rows(tmp_path: Path) -> None:
    planner = Rounds(rounds=3, width=4)
    _, summary, provider = _run(tmp_path, [planner], window=64)
    assert summary.completed == summary.planned == 3 * 4 + 1
    # Round 2 asks about round 1's answers (full rows handed back), round 3 about round 2's.
    assert all(p.startswith("seed/1") for p in provider.prompts[:4])
    assert all(p.startswith("echo seed/1/2") for p in provider.prompts[4:8])
    assert all(p.startswith("echo echo seed/1/2/3") for p in provider.prompts[8:12])
    assert provider.prompts[12] == "after everything"  # added by on_settled
    # Between rounds the planner said "later", and "done" only at the very end.
    assert "later" in planner.said and planner.said[-1] == "done"
    assert planner.said.count("done") == 1


def test_a_call_waits_for_the_calls_it_depends_on(tmp_path: Path) -> None:
    # The dependent call is handed out first; it runs only once its dependency is logged.
    calls = [_call("child", "child", after=("parent",)), _call("parent", "parent")]
    _, summary, provider = _run(tmp_path, [Fixed(calls)], window=8)
    assert summary.completed == 2
    assert provider.prompts == ["parent", "child"]


def test_a_call_whose_dependency_never_comes_stays_pending(tmp_path: Path) -> None:
    calls = [_call("orphan", "orphan", after=("missing",)), _call("other", "other")]
    _, summary, provider = _run(tmp_path, [Fixed(calls)], window=8)
    assert (summary.completed, summary.pending) == (1, 1)
    assert provider.prompts == ["other"]


def test_default_window_is_a_few_times_the_total_concurrency() -> None:
    assert default_window({"a": Limits(max_concurrency=40), "b": Limits(max_concurrency=10)}) == 200
    assert default_window({"a": Limits(max_concurrency=2)}) == 64  # at least 64
    assert default_window({"a": Limits()}, unlimited=300) == 300


class Recording(Scheduler):
    """A scheduler that records the priority of every call it is given."""

    def __init__(self, providers: Mapping[str, Provider]) -> None:
        super().__init__(providers, {}, RetryConfig(max_attempts=1))
        self.priorities: list[tuple[int, int]] = []  # (priority, turns in the request)

    async def call(
        self,
        provider_name: str,
        request: GenerateRequest,
        *,
        model_key: str | None = None,
        priority: int = 0,
    ) -> CallOutcome:
        turns = sum(1 for m in request.messages if m.role == "user")
        self.priorities.append((priority, turns))
        return await super().call(provider_name, request, model_key=model_key)


def test_calls_carry_their_priority_to_the_scheduler(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=2, questions=2, multi_turn=True))
    log = RunLog(t.output_dir)
    recording = Recording(make_providers(t))

    async def go() -> Any:
        async with log.writer() as writer:
            planner = AllPairsPlanner(t, build_plan(t))
            return await Runner([planner], recording, writer, log).run()

    summary = asyncio.run(go())
    assert summary.pending == 0 and summary.completed == build_plan(t).size
    assert {p for p, _ in recording.priorities} == {
        Priority.ANSWER,
        Priority.REVIEW,
        Priority.FOLLOW_UP,
    }
    # A question's second turn is a follow-up of the answer already under way.
    assert all(p == Priority.FOLLOW_UP for p, turns in recording.priorities if turns == 2)
    assert any(turns == 2 for _, turns in recording.priorities)


def test_run_tournament_takes_a_window(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=3, questions=3))
    summary = asyncio.run(run_tournament(t, window=1))
    assert summary.pending == 0 and summary.completed == build_plan(t).size


class Stopping(Counting):
    """Stops the scheduler (as a signal does) during its `at`-th call."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at
        self.scheduler: Scheduler | None = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if len(self.prompts) + 1 == self.at and self.scheduler is not None:
            self.scheduler.stop()
        return await super().generate(request)


def test_a_stopped_run_takes_no_more_calls_from_its_planners(tmp_path: Path) -> None:
    # Ctrl-C on a big run: the calls in flight end, and the run ends without building
    # (and refusing one by one) every call its planners still had; they stay pending.
    provider = Stopping(at=5)
    scheduler = Scheduler({"p": provider}, {}, RetryConfig(max_attempts=1))
    provider.scheduler = scheduler
    planner = Fixed([_call(f"c{i}", f"prompt {i}") for i in range(1000)])
    log = RunLog(tmp_path)

    async def go() -> RunSummary:
        async with log.writer() as writer:
            return await Runner([planner], scheduler, writer, log, window=4).run()

    summary = asyncio.run(go())
    assert 1 <= summary.completed <= 8 and summary.failed == 0
    assert summary.pending == 1000 - summary.completed
    assert len(planner.calls) >= 1000 - 8  # never asked for
    assert log.read("answers").height == summary.completed
