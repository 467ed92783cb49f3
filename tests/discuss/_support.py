"""The discussion protocol through the runner, with scripted outcomes, and a battle to discuss."""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.config import DiscussionConfig, Question
from arena.discuss import (
    TABLE,
    Battle,
    Discussant,
    DiscussionResult,
    DiscussionSpec,
    DiscussionSteps,
    LoggedReview,
    Settings,
    discussion_steps,
    load_templates,
)
from arena.runner import Call, CallResult, Idle, Planner, RunContext, Runner
from arena.scheduler import CallOutcome, OutcomeStatus
from arena.store import RunLog
from arena.store._schema import normalize_row
from arena.types import GenerateRequest, GenerateResult, Usage, Verdict

REVIEW_TEMPLATE = "Review.\n{question}\nA: {answer_a}\nB: {answer_b}\nVerdict: [[A]]/[[B]]/[[tie]]"

QUESTION = Question("q1", ("Why is the sky blue?",))
BATTLE = Battle(QUESTION, "alpha", "beta", "ans-a", "ans-b")
LEADER = Discussant("lead", "sim", "lead-id")
FOLLOWER = Discussant("follow", "sim", "follow-id")


def outcome(text: str | None, status: OutcomeStatus = "ok") -> CallOutcome:
    """A scheduler outcome with this reply (or none, for failed / stopped)."""
    result = GenerateResult(text, Usage(11, 7)) if text is not None else None
    error = None if text is not None else f"{status} call"
    return CallOutcome(status, result, error, None, 1, 0.01, 0.002, 100.0, 100.5)


class Script:
    """The runner's scheduler and log writer: replies in order; records every request, row
    and the stage's counts."""

    run_id = "script"
    stopped = False
    spent_usd = 0.0
    budget_exhausted = False
    internal_errors = 0
    stopped_by_errors: str | None = None
    replaced_chars = 0

    def __init__(self, *replies: CallOutcome | str) -> None:
        self.replies = [r if isinstance(r, CallOutcome) else outcome(r) for r in replies]
        self.requests: list[GenerateRequest] = []
        self.models: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()

    async def call(
        self, provider: str, request: GenerateRequest, *, priority: int = 0
    ) -> CallOutcome:
        assert self.replies, f"unexpected call: {request}"
        self.requests.append(request)
        self.models.append(request.model)
        return self.replies.pop(0)

    def abort(self) -> None:
        self.stopped = True

    async def write(self, table: str, row: dict[str, Any]) -> None:
        assert table == TABLE
        self.rows.append(normalize_row(table, row))


class OneDiscussion(Planner):
    """A planner of one discussion: its steps, as the discussion stage hands them out."""

    def __init__(
        self, spec: DiscussionSpec, settings: Settings, logged: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self.spec, self.settings, self.logged = spec, settings, logged
        self.steps = DiscussionSteps("discussions")

    def start(self, ctx: RunContext) -> None:
        steps = discussion_steps(
            self.spec,
            self.settings,
            self.logged,
            run_id=ctx.run_id,
            skipped=lambda: ctx.stats.skip("discussions"),
        )
        self.steps.add(steps, ctx.stats)

    def next_call(self) -> Call | Idle:
        call = self.steps.next_call()
        if call is not None:
            return call
        return Idle.LATER if self.steps.busy else Idle.DONE

    def on_result(self, result: CallResult) -> None:
        self.steps.on_result(result)


def run_discussion(
    spec: DiscussionSpec,
    settings: Settings,
    logged: Mapping[str, Mapping[str, Any]],
    script: Script,
) -> DiscussionResult:
    """Run (or resume) one discussion through the runner; `script` answers and logs."""
    planner = OneDiscussion(spec, settings, logged)
    with tempfile.TemporaryDirectory() as folder:
        runner = Runner([planner], script, script, RunLog(folder), run_id=script.run_id)  # type: ignore[arg-type]
        asyncio.run(runner.run())
    counts = runner.stats.stage("discussions").full()
    script.counts = Counter({k: v for k, v in counts.items() if k != "pending" and v})
    (result,) = planner.steps.ended
    return result


def settings(
    max_turns: int = 4,
    *,
    stop_on_agreement: bool = False,
    temperatures: dict[str, float] | None = None,
) -> Settings:
    """The default templates with a short review template."""
    cfg = DiscussionConfig(max_turns=max_turns)
    return Settings(
        templates=load_templates(cfg, Path(__file__)),
        review_template=REVIEW_TEMPLATE,
        review_temperature=0.0,
        review_max_tokens=512,
        temperature=0.2,
        max_tokens=256,
        max_turns=max_turns,
        context="ctx",
        stop_on_agreement=stop_on_agreement,
        temperatures=temperatures or {},
    )


def spec(lead: str | None = "A", follow: str | None = "B") -> DiscussionSpec:
    """A discussion whose initial reviews come from the log (None: not logged)."""
    reuse = {}
    if lead is not None:
        reuse["lead"] = LoggedReview(
            "rev-lead", f"Lead's review.\nVerdict: [[{lead}]]", Verdict(lead)
        )
    if follow is not None:
        reuse["follow"] = LoggedReview(
            "rev-follow", f"Follow's review.\nVerdict: [[{follow}]]", Verdict(follow)
        )
    return DiscussionSpec(
        id="disc-1",
        battle=BATTLE,
        leader=LEADER,
        follower=FOLLOWER,
        trigger="tie",
        answer_a=("Answer one.",),
        answer_b=("Answer two.",),
        reuse=reuse,
    )


def turn(n: int, preference: str | None) -> str:
    """A scripted turn text, with a preference line unless None."""
    body = f"Argument of turn {n}."
    return body if preference is None else f"{body}\nPreference: [[{preference}]]"
