"""The plan of a tournament and the asyncio pipeline that runs it.

Answers and reviews flow without a barrier: a review starts as soon as both of
its answers are logged. All waiting happens in the scheduler; all writing goes
through the one log writer. Extra stages (discussion, ...) plug in through
`Stage` hooks; they live above this module and below `arena.engine`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.config import Question, Tournament
from arena.providers import Provider, create_provider
from arena.review import parse_verdict, render_review_prompt
from arena.scheduler import CallOutcome, Scheduler
from arena.store import LogWriter, RunLog
from arena.types import CallStatus, GenerateRequest, Message, Verdict, stable_id


@dataclass(frozen=True)
class AnswerCall:
    """One contestant answering one question (all its turns)."""

    id: str
    question: Question
    model: str


@dataclass(frozen=True)
class ReviewCall:
    """One reviewer judging one ordered battle (question, model_a, model_b)."""

    id: str
    question: Question
    model_a: str
    model_b: str
    reviewer: str
    answer_a_id: str
    answer_b_id: str


@dataclass(frozen=True)
class Plan:
    """Every call a tournament needs, with stable content-derived ids."""

    answers: tuple[AnswerCall, ...]
    reviews: tuple[ReviewCall, ...]

    @property
    def size(self) -> int:
        return len(self.answers) + len(self.reviews)


def answer_id(t: Tournament, model: str, q: Question) -> str:
    """Id of a model's answer to a question: changes when anything it depends on does."""
    return stable_id(
        "answer", {"model": t.model_fingerprint(model), "question": [q.id, list(q.turns)]}
    )


def review_context(t: Tournament, reviewer: str) -> str:
    """Hash of everything a reviewer's reviews depend on besides the two answers."""
    return stable_id(
        "review-context",
        {
            "reviewer": t.model_fingerprint(reviewer),
            "template": t.review_template,
            "temperature": t.config.review.temperature,
            "max_tokens": t.config.review.max_tokens,
        },
    )


def review_id(question_id: str, a_id: str, b_id: str, context: str) -> str:
    """Id of a review: depends on both answers, the reviewer and the review prompt."""
    return stable_id("review", [question_id, a_id, b_id, context])


def build_plan(t: Tournament) -> Plan:
    """One answer per (contestant, question); one review per (question, i != j, reviewer)."""
    answers: list[AnswerCall] = []
    reviews: list[ReviewCall] = []
    contexts = {r: review_context(t, r) for r in t.reviewers}
    for q in t.questions:
        ids = {m: answer_id(t, m, q) for m in t.contestants}
        answers.extend(AnswerCall(ids[m], q, m) for m in t.contestants)
        for a in t.contestants:
            for b in t.contestants:
                if a == b:
                    continue
                for r in t.reviewers:
                    rid = review_id(q.id, ids[a], ids[b], contexts[r])
                    reviews.append(ReviewCall(rid, q, a, b, r, ids[a], ids[b]))
    return Plan(tuple(answers), tuple(reviews))


@dataclass
class RunSummary:
    """What a run did; `--json` prints it."""

    planned: int = 0
    skipped: int = 0
    completed: int = 0
    failed: int = 0
    invalid: int = 0
    pending: int = 0
    deferred: int = 0
    budget_stopped: bool = False
    interrupted: bool = False
    spent_usd: float = 0.0
    wall_seconds: float = 0.0
    by_stage: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def make_providers(t: Tournament) -> dict[str, Provider]:
    """One provider instance per provider entry used by the tournament."""
    used = {t.provider_of(m) for m in t.used_models()}
    providers: dict[str, Provider] = {}
    for pname in sorted(used):
        pcfg = t.config.providers[pname]
        models = {
            t.provider_model_id(m): t.model(m) for m in t.config.models if t.provider_of(m) == pname
        }
        providers[pname] = create_provider(pname, pcfg, models, t.config.seed)
    return providers


ProgressFn = Callable[[str, int, int], None]


class Stage:
    """An extra stage plugged into the pipeline (discussion, BatchEval, ...).

    A subclass gets the pipeline in `start` and may spawn calls at any time
    with `pipeline.spawn(coro)`, count them with `pipeline.count(name, what)`
    (`what` in skipped / completed / failed / invalid / deferred) after adding
    its planned total with `pipeline.add_planned(name, n)`, and write rows
    with `await pipeline.writer.write(table, row)`. The hooks run on the event
    loop as results arrive, so a stage reacts without a global barrier.
    `finish` runs once every call spawned so far has ended; it may spawn
    more calls (the pipeline then waits for those too, and calls `finish`
    again), and must return without spawning once it has nothing left.
    """

    name = "stage"

    async def start(self, pipeline: Pipeline) -> None:
        """Called once before any call starts."""

    def on_answer(self, call: AnswerCall, turns: list[str]) -> None:
        """An answer is available (logged now or earlier)."""

    def on_review(self, call: ReviewCall, verdict: Verdict) -> None:
        """A review is available (logged now or earlier; INVALID included)."""

    async def finish(self) -> None:
        """Everything spawned so far has ended."""


StageFactory = Callable[[Tournament], "Stage | None"]


class Pipeline:
    """Runs a plan's pending calls through the scheduler into the log."""

    def __init__(
        self,
        t: Tournament,
        plan: Plan,
        scheduler: Scheduler,
        writer: LogWriter,
        done_answers: dict[str, list[str]],
        done_reviews: set[str],
        progress: ProgressFn | None = None,
        stages: list[Stage] | None = None,
        done_verdicts: dict[str, Verdict] | None = None,
    ) -> None:
        self.t = t
        self.plan = plan
        self.scheduler = scheduler
        self.writer = writer
        self.answers = done_answers
        self.done_reviews = done_reviews
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:12]
        self.summary = RunSummary(planned=plan.size)
        self.stage_counts: dict[str, Counter[str]] = defaultdict(Counter)
        self.waiting: dict[str, list[ReviewCall]] = defaultdict(list)
        self.tasks: set[asyncio.Task[None]] = set()
        self.stages = list(stages or [])
        self.done_verdicts = done_verdicts or {}
        self.totals: dict[str, int] = {"answers": len(plan.answers), "reviews": len(plan.reviews)}

    def add_planned(self, stage: str, n: int) -> None:
        """A stage announces n more planned calls."""
        self.totals[stage] = self.totals.get(stage, 0) + n
        self.summary.planned += n

    def count(self, stage: str, what: str) -> None:
        """Count one call of a stage as skipped / completed / failed / invalid / deferred."""
        self.stage_counts[stage][what] += 1
        if self.progress is not None:
            done = sum(v for k, v in self.stage_counts[stage].items() if k != "deferred")
            self.progress(stage, done, self.totals.get(stage, done))

    def spawn(self, coro: Any) -> None:
        """Run a coroutine as part of this run (the run waits for it)."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _answer_ready(self, call: AnswerCall, turns: list[str]) -> None:
        for stage in self.stages:
            stage.on_answer(call, turns)

    def _review_ready(self, call: ReviewCall, verdict: Verdict) -> None:
        for stage in self.stages:
            stage.on_review(call, verdict)

    async def run(self) -> RunSummary:
        """Start every runnable call and wait until nothing more can run."""
        start = time.monotonic()
        for stage in self.stages:
            await stage.start(self)
        for call in self.plan.answers:
            if call.id in self.answers:
                self.count("answers", "skipped")
                self._answer_ready(call, self.answers[call.id])
            else:
                self.spawn(self._answer(call))
        for review in self.plan.reviews:
            if review.id in self.done_reviews:
                self.count("reviews", "skipped")
                if review.id in self.done_verdicts:
                    self._review_ready(review, self.done_verdicts[review.id])
            else:
                self._maybe_start(review)
        while True:
            while self.tasks:
                await asyncio.gather(*list(self.tasks))
            for stage in self.stages:
                await stage.finish()
            if not self.tasks:
                break
        s = self.summary
        for stage_name, counts in self.stage_counts.items():
            s.by_stage[stage_name] = dict(counts)
        s.skipped = sum(c["skipped"] for c in self.stage_counts.values())
        s.completed = sum(c["completed"] for c in self.stage_counts.values())
        s.failed = sum(c["failed"] for c in self.stage_counts.values())
        s.invalid = sum(c["invalid"] for c in self.stage_counts.values())
        s.pending = s.planned - s.skipped - s.completed - s.failed - s.invalid
        s.deferred = sum(c["deferred"] for c in self.stage_counts.values())
        s.spent_usd = self.scheduler.spent_usd
        s.budget_stopped = self.scheduler.budget_exhausted
        s.wall_seconds = time.monotonic() - start
        return s

    def _maybe_start(self, review: ReviewCall) -> None:
        missing = [
            aid for aid in (review.answer_a_id, review.answer_b_id) if aid not in self.answers
        ]
        if missing:
            self.waiting[missing[0]].append(review)
        else:
            self.spawn(self._review(review))

    def _record_unlogged(self, stage: str, outcome: CallOutcome) -> None:
        # stopped / deferred / budget: nothing is logged, the call stays pending.
        if outcome.status == "deferred":
            self.count(stage, "deferred")
            if outcome.error and outcome.error not in self.summary.errors:
                self.summary.errors.append(outcome.error)

    def _base_row(self, call_id: str, provider: str, outcomes: list[CallOutcome]) -> dict[str, Any]:
        last = outcomes[-1]
        usage = [o.usage for o in outcomes]  # billed tokens, failed attempts included
        return {
            "id": call_id,
            "provider": provider,
            "tokens_in": sum(u.input_tokens for u in usage),
            "tokens_out": sum(u.output_tokens for u in usage),
            "cost_usd": sum(o.cost_usd for o in outcomes),
            "latency_s": sum(o.latency_s for o in outcomes),
            "attempts": sum(o.attempts for o in outcomes),
            "started_at": outcomes[0].started_at,
            "finished_at": last.finished_at,
            "run_id": self.run_id,
        }

    async def _answer(self, call: AnswerCall) -> None:
        model = self.t.model(call.model)
        provider = self.t.provider_of(call.model)
        messages: list[Message] = []
        outcomes: list[CallOutcome] = []
        turns: list[str] = []
        for turn in call.question.turns:
            messages.append(Message("user", turn))
            request = GenerateRequest(
                model=self.t.provider_model_id(call.model),
                messages=tuple(messages),
                temperature=model.temperature,
                max_tokens=model.max_tokens,
            )
            outcome = await self.scheduler.call(provider, request)
            outcomes.append(outcome)
            if outcome.status != "ok" or outcome.result is None:
                break
            turns.append(outcome.result.text)
            messages.append(Message("assistant", outcome.result.text))
        last = outcomes[-1]
        if last.status in ("stopped", "deferred", "budget"):
            self._record_unlogged("answers", last)
            return
        row = self._base_row(call.id, provider, outcomes)
        row.update(question_id=call.question.id, model=call.model)
        if last.status == "ok":
            row.update(status=CallStatus.OK.value, error=None, answer_turns=turns)
        else:
            row.update(status=CallStatus.FAILED.value, error=last.error, answer_turns=None)
        await self.writer.write("answers", row)
        if last.status == "ok":
            self.answers[call.id] = turns
            self.count("answers", "completed")
            self._answer_ready(call, turns)
            for review in self.waiting.pop(call.id, []):
                self._maybe_start(review)
        else:
            self.count("answers", "failed")

    async def _review(self, call: ReviewCall) -> None:
        reviewer = call.reviewer
        provider = self.t.provider_of(reviewer)
        prompt = render_review_prompt(
            self.t.review_template,
            call.question,
            self.answers[call.answer_a_id],
            self.answers[call.answer_b_id],
        )
        request = GenerateRequest(
            model=self.t.provider_model_id(reviewer),
            messages=(Message("user", prompt),),
            temperature=self.t.config.review.temperature,
            max_tokens=self.t.config.review.max_tokens,
        )
        outcome = await self.scheduler.call(provider, request)
        if outcome.status in ("stopped", "deferred", "budget"):
            self._record_unlogged("reviews", outcome)
            return
        row = self._base_row(call.id, provider, [outcome])
        row.update(
            question_id=call.question.id,
            model_a=call.model_a,
            model_b=call.model_b,
            reviewer=reviewer,
            answer_a_id=call.answer_a_id,
            answer_b_id=call.answer_b_id,
        )
        if outcome.status == "ok" and outcome.result is not None:
            verdict = parse_verdict(outcome.result.text)
            status = CallStatus.INVALID if verdict is Verdict.INVALID else CallStatus.OK
            row.update(
                status=status.value, error=None, text=outcome.result.text, verdict=verdict.value
            )
            await self.writer.write("reviews", row)
            self.count("reviews", "invalid" if status is CallStatus.INVALID else "completed")
            self._review_ready(call, verdict)
        else:
            row.update(status=CallStatus.FAILED.value, error=outcome.error, text=None, verdict=None)
            await self.writer.write("reviews", row)
            self.count("reviews", "failed")


def load_done(log: RunLog) -> tuple[dict[str, list[str]], set[str]]:
    """Answers already logged ok (id -> turns) and ids of reviews logged with a result."""
    answers_df = log.read("answers")
    done_answers: dict[str, list[str]] = {}
    if answers_df.height:
        ok = answers_df.filter(answers_df["status"] == CallStatus.OK.value)
        for rid, turns in zip(ok["id"].to_list(), ok["answer_turns"].to_list(), strict=True):
            done_answers[rid] = list(turns)
    done_reviews = log.ids("reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value})
    return done_answers, done_reviews


def load_verdicts(log: RunLog) -> dict[str, Verdict]:
    """Verdicts of reviews already logged with a result (id -> verdict)."""
    df = log.read("reviews")
    if not df.height:
        return {}
    df = df.filter(df["status"] != CallStatus.FAILED.value)
    return {i: Verdict(v) for i, v in zip(df["id"].to_list(), df["verdict"].to_list(), strict=True)}


__all__ = [
    "AnswerCall",
    "Pipeline",
    "Plan",
    "ProgressFn",
    "ReviewCall",
    "RunSummary",
    "Stage",
    "StageFactory",
    "answer_id",
    "build_plan",
    "load_done",
    "load_verdicts",
    "make_providers",
    "review_context",
    "review_id",
]
