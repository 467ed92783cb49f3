"""The turn protocol of one discussion, resumable from its logged rows.

1. Each discussant's initial review: copied from the reviews table when it is
   there, else asked with the tournament's review template.
2. Turns, leader first, then alternating, each sent as a multi-message chat
   (see `arena.discuss._prompt`): the role prompt as system prompt, the
   opening (question, both answers, both initial reviews, the leader's first),
   then every turn so far as a message of its speaker's role, each user
   message ending with the role reminder.
3. By default every discussion runs `max_turns` turns, as in the paper. The
   final verdict is the last turn's preferences: the one both discussants
   hold after the last turn (each one's latest preference; the follower's
   initial one if it never spoke) when they agree, else the discussion is
   `unresolved` and changes nothing. With `stop_on_agreement` a discussion
   ends `agreed` after the first turn that leaves the two agreeing (cheaper;
   not the paper's protocol).
A reply without a readable preference is asked once more (the same messages
with a note); a second unreadable reply ends the discussion `unresolved`.

Every step has a row id derived from the discussion id, so a resumed discussion
reuses the rows already logged and asks only what is missing. A failed call is
logged as failed and ends this attempt at the discussion (the next run asks
again); a call that was stopped, deferred or refused by the budget is not
logged and leaves the discussion pending.

The protocol is written once, as a generator of steps (`discussion_steps`): an
`Ask` (one call, and the row its outcome becomes) or a `Record` (a row written
without a call). `arena.discuss._planner.DiscussionSteps` drives it: each step a
call of the one runner.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from arena.config import Question
from arena.discuss._prompt import (
    REASK_NOTE,
    REASK_REVIEW_NOTE,
    Spoken,
    Templates,
    render_messages,
)
from arena.review import parse_verdict, render_review_prompt
from arena.scheduler import CallOutcome
from arena.types import CallStatus, GenerateRequest, Message, Verdict, stable_id

__all__ = [
    "Ask",
    "Battle",
    "Discussant",
    "DiscussionResult",
    "DiscussionSpec",
    "LoggedReview",
    "Pending",
    "Record",
    "Settings",
    "Steps",
    "battle_id",
    "discussion_steps",
    "logged_calls",
    "outcome_row",
    "row_id",
]

_DONE = (CallStatus.OK.value, CallStatus.INVALID.value)

Status = Literal["agreed", "unresolved", "failed", "pending"]


def battle_id(question_id: str, answer_a_id: str, answer_b_id: str) -> str:
    """Id of a battle: one ordered pair of answers to a question."""
    return stable_id("battle", [question_id, answer_a_id, answer_b_id])


def row_id(
    discussion_id: str, kind: str, turn: int = 0, speaker: str = "", attempt: int = 1
) -> str:
    """Log row id of one step of a discussion (`kind` initial / turn / final)."""
    return stable_id("discussion-row", [discussion_id, kind, turn, speaker, attempt])


@dataclass(frozen=True)
class Discussant:
    """A discussing model: its config name, provider entry and provider-side id."""

    name: str
    provider: str
    model_id: str


@dataclass(frozen=True)
class Battle:
    """One ordered battle: a question and the answers shown as A and B."""

    question: Question
    model_a: str
    model_b: str
    answer_a_id: str
    answer_b_id: str

    @property
    def id(self) -> str:
        """The battle id (question and both answer ids)."""
        return battle_id(self.question.id, self.answer_a_id, self.answer_b_id)


@dataclass(frozen=True)
class LoggedReview:
    """A review from the reviews table that serves as a discussant's initial review."""

    id: str
    text: str
    verdict: Verdict


@dataclass(frozen=True)
class Settings:
    """Everything the prompts and requests of a discussion depend on."""

    templates: Templates
    review_template: str
    review_temperature: float
    review_max_tokens: int
    temperature: float
    max_tokens: int
    max_turns: int
    context: str
    stop_on_agreement: bool = False
    temperatures: Mapping[str, float] = field(default_factory=dict)  # per discussant name

    def temperature_of(self, name: str) -> float:
        """The sampling temperature of a discussant's turns."""
        return self.temperatures.get(name, self.temperature)


@dataclass(frozen=True)
class DiscussionSpec:
    """One discussion to run: the battle, who leads, who follows, why it was selected."""

    id: str
    battle: Battle
    leader: Discussant
    follower: Discussant
    trigger: str
    answer_a: tuple[str, ...]
    answer_b: tuple[str, ...]
    reuse: Mapping[str, LoggedReview]  # discussant name -> its logged review of the battle


@dataclass(frozen=True)
class DiscussionResult:
    """How a discussion ended (or why it has not yet)."""

    status: Status
    verdict: Verdict | None
    turns: int
    reason: str | None


def logged_calls(logged: Mapping[str, Mapping[str, Any]]) -> int:
    """How many logged rows of a discussion a rerun reuses as calls (counted `skipped`)."""
    return sum(
        1
        for row in logged.values()
        if row.get("kind") in ("initial", "turn")
        and row.get("status") in _DONE
        and row.get("review_id") is None
    )


@dataclass(frozen=True)
class Ask:
    """One call of a discussion: its request, and the row (without outcome) it is logged as."""

    row_id: str
    provider: str
    request: GenerateRequest
    row: Mapping[str, Any]


@dataclass(frozen=True)
class Record:
    """A row a discussion logs without a call (a copied review, the final row)."""

    row: Mapping[str, Any]


@dataclass(frozen=True)
class Pending:
    """An `Ask` that did not end (stopped, deferred, refused by the budget): nothing logged."""

    error: str | None


Step = Ask | Record
Reply = Mapping[str, Any] | Pending | None  # an Ask's logged row; None for a Record
Steps = Generator[Step, Reply, DiscussionResult]


def outcome_row(ask: Ask, outcome: CallOutcome) -> tuple[CallStatus, dict[str, Any]]:
    """The row a final outcome of an `Ask` is logged as, and its status."""
    out = dict(ask.row)
    usage = outcome.result.usage if outcome.result is not None else None
    out.update(
        provider=ask.provider,
        tokens_in=usage.input_tokens if usage else 0,
        tokens_out=usage.output_tokens if usage else 0,
        cost_usd=outcome.cost_usd,
        usage_estimated=outcome.usage.estimated,
        latency_s=outcome.latency_s,
        attempts=outcome.attempts,
        started_at=outcome.started_at,
        finished_at=outcome.finished_at,
    )
    if outcome.status != "ok" or outcome.result is None:
        out.update(status=CallStatus.FAILED.value, error=outcome.error)
        return CallStatus.FAILED, out
    text = outcome.result.text
    preference = parse_verdict(text)
    status = CallStatus.INVALID if preference is Verdict.INVALID else CallStatus.OK
    out.update(status=status.value, text=text, preference=preference.value)
    return status, out


@dataclass(frozen=True)
class _Said:
    text: str
    preference: Verdict


class _Stop(Exception):
    def __init__(self, result: DiscussionResult) -> None:
        super().__init__(result.status)
        self.result = result


class _Run:
    """The state of one discussion while it runs."""

    def __init__(
        self,
        spec: DiscussionSpec,
        settings: Settings,
        logged: Mapping[str, Mapping[str, Any]],
        run_id: str,
        skipped: Callable[[], None],
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.logged = logged
        self.run_id = run_id
        self.skipped = skipped
        self.turns = 0

    def _row(
        self, kind: str, turn: int, attempt: int, speaker: Discussant | None, rid: str
    ) -> dict[str, Any]:
        s, b = self.spec, self.spec.battle
        return {
            "id": rid,
            "discussion_id": s.id,
            "battle_id": b.id,
            "context": self.settings.context,
            "kind": kind,
            "turn": turn,
            "attempt": attempt,
            "speaker": speaker.name if speaker else None,
            "leader": s.leader.name,
            "follower": s.follower.name,
            "question_id": b.question.id,
            "model_a": b.model_a,
            "model_b": b.model_b,
            "answer_a_id": b.answer_a_id,
            "answer_b_id": b.answer_b_id,
            "trigger": s.trigger,
            "run_id": self.run_id,
        }

    def _call_step(
        self, kind: str, turn: int, attempt: int, who: Discussant, request: GenerateRequest
    ) -> Generator[Step, Reply, _Said]:
        rid = row_id(self.spec.id, kind, turn, who.name, attempt)
        row = self.logged.get(rid)
        if row is not None and row.get("status") in _DONE:
            self.skipped()
            return _Said(str(row["text"]), Verdict(str(row["preference"])))
        reply = yield Ask(rid, who.provider, request, self._row(kind, turn, attempt, who, rid))
        if reply is None or isinstance(reply, Pending):
            error = reply.error if isinstance(reply, Pending) else None
            raise _Stop(DiscussionResult("pending", None, self.turns, error))
        if reply.get("status") == CallStatus.FAILED.value:
            raise _Stop(DiscussionResult("failed", None, self.turns, reply.get("error")))
        return _Said(str(reply["text"]), Verdict(str(reply["preference"])))

    def _copied_review(
        self, who: Discussant, review: LoggedReview
    ) -> Generator[Step, Reply, _Said]:
        rid = row_id(self.spec.id, "initial", 0, who.name, 1)
        if rid not in self.logged:
            out = self._row("initial", 0, 1, who, rid)
            valid = review.verdict is not Verdict.INVALID
            out.update(
                status=(CallStatus.OK if valid else CallStatus.INVALID).value,
                text=review.text,
                preference=review.verdict.value,
                review_id=review.id,
                tokens_in=0,
                tokens_out=0,
                cost_usd=0.0,
            )
            yield Record(out)
        return _Said(review.text, review.verdict)

    def _review_request(self, who: Discussant, attempt: int) -> GenerateRequest:
        s = self.spec
        prompt = render_review_prompt(
            self.settings.review_template, s.battle.question, s.answer_a, s.answer_b
        )
        if attempt > 1:
            prompt += REASK_REVIEW_NOTE
        return GenerateRequest(
            model=who.model_id,
            messages=(Message("user", prompt),),
            temperature=self.settings.review_temperature,
            max_tokens=self.settings.review_max_tokens,
        )

    def _initial(self, who: Discussant) -> Generator[Step, Reply, _Said]:
        review = self.spec.reuse.get(who.name)
        said = (
            (yield from self._copied_review(who, review))
            if review is not None
            else (yield from self._call_step("initial", 0, 1, who, self._review_request(who, 1)))
        )
        if said.preference is Verdict.INVALID:
            said = yield from self._call_step("initial", 0, 2, who, self._review_request(who, 2))
        if said.preference is Verdict.INVALID:
            raise _Stop(
                DiscussionResult(
                    "unresolved",
                    None,
                    0,
                    f"unreadable preference in the initial review of {who.name} (asked twice)",
                )
            )
        return said

    def _turn_request(
        self, position: int, initial: tuple[str, str], history: Sequence[Spoken], attempt: int
    ) -> GenerateRequest:
        s, st = self.spec, self.settings
        who = s.leader if position == 1 else s.follower
        system, messages = render_messages(
            st.templates,
            s.battle.question,
            s.answer_a,
            s.answer_b,
            initial,
            history,
            position,
            REASK_NOTE if attempt > 1 else "",
        )
        return GenerateRequest(
            model=who.model_id,
            messages=messages,
            temperature=st.temperature_of(who.name),
            max_tokens=st.max_tokens,
            system=system,
        )

    def _final(self, result: DiscussionResult) -> Generator[Step, Reply, None]:
        rid = row_id(self.spec.id, "final")
        if rid in self.logged:
            return
        out = self._row("final", result.turns, 1, None, rid)
        out.update(
            status=CallStatus.OK.value,
            verdict=result.verdict.value if result.verdict else None,
            outcome=result.status,
            reason=result.reason,
        )
        yield Record(out)

    def _discuss(self) -> Generator[Step, Reply, DiscussionResult]:
        s = self.spec
        lead = yield from self._initial(s.leader)
        follow = yield from self._initial(s.follower)
        initial = (lead.text, follow.text)
        latest = {1: lead.preference, 2: follow.preference}
        history: list[Spoken] = []
        for turn in range(1, self.settings.max_turns + 1):
            position = 1 if turn % 2 else 2
            who = s.leader if position == 1 else s.follower
            said = yield from self._call_step(
                "turn", turn, 1, who, self._turn_request(position, initial, history, 1)
            )
            if said.preference is Verdict.INVALID:
                said = yield from self._call_step(
                    "turn", turn, 2, who, self._turn_request(position, initial, history, 2)
                )
            if said.preference is Verdict.INVALID:
                return DiscussionResult(
                    "unresolved",
                    None,
                    turn - 1,
                    f"unreadable preference from {who.name} at turn {turn} (asked twice)",
                )
            self.turns = turn
            history.append(Spoken(position, said.text))
            latest[position] = said.preference
            if self.settings.stop_on_agreement and latest[1] == latest[2]:
                return DiscussionResult("agreed", said.preference, turn, None)
        if latest[1] == latest[2]:
            return DiscussionResult("agreed", latest[1], self.turns, None)
        return DiscussionResult(
            "unresolved",
            None,
            self.turns,
            f"no agreement after {self.turns} turns "
            f"(last preferences: {s.leader.name} {latest[1].value}, "
            f"{s.follower.name} {latest[2].value})",
        )

    def steps(self) -> Steps:
        try:
            result = yield from self._discuss()
        except _Stop as stop:
            result = stop.result
        if result.status in ("agreed", "unresolved"):
            yield from self._final(result)
        return result


def discussion_steps(
    spec: DiscussionSpec,
    settings: Settings,
    logged: Mapping[str, Mapping[str, Any]],
    *,
    run_id: str,
    skipped: Callable[[], None],
) -> Steps:
    """The steps of one discussion (resumed from `logged`: row id -> row of this discussion).

    Send each `Ask` its logged row (`outcome_row`) or `Pending`, each `Record`
    None once written; the generator returns how the discussion ended (the
    final row, when it ended, is its last `Record`). `skipped` is called for
    every call already logged.
    """
    return _Run(spec, settings, logged, run_id, skipped).steps()
