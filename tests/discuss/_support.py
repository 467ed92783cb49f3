"""A scripted channel for the discussion protocol, and a battle to discuss."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from arena.config import DiscussionConfig, Question
from arena.discuss import (
    Battle,
    Discussant,
    DiscussionSpec,
    LoggedReview,
    Settings,
    load_templates,
)
from arena.scheduler import CallOutcome, OutcomeStatus
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
    """Replies in order; records every request, row and count."""

    run_id = "script"

    def __init__(self, *replies: CallOutcome | str) -> None:
        self.replies = [r if isinstance(r, CallOutcome) else outcome(r) for r in replies]
        self.requests: list[GenerateRequest] = []
        self.models: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()

    async def call(self, provider: str, request: GenerateRequest) -> CallOutcome:
        assert self.replies, f"unexpected call: {request}"
        self.requests.append(request)
        self.models.append(request.model)
        return self.replies.pop(0)

    async def write(self, row: dict[str, Any]) -> None:
        self.rows.append(normalize_row("discussions", row))

    def count(self, what: str) -> None:
        self.counts[what] += 1


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
