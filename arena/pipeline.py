"""The plan of a tournament and its all-pairs planner of answers and reviews.

Answers and reviews flow without a barrier: a review is asked for as soon as
both of its answers are logged. The planner only says what to ask and what the
outcomes become; `arena.runner.Runner` runs the calls (all waiting happens in
the scheduler, all writing goes through the one log writer). Extra stages
(discussion, BatchEval) are planners too; they live above this module and
below `arena.engine`, and read this planner's `plan`, `answers` and
`settled` state.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.config import FILE_PROVIDER, Question, Tournament
from arena.providers import Provider, create_provider
from arena.review import parse_verdict, render_review_prompt, uses_reference
from arena.runner import (
    Call,
    CallResult,
    Finished,
    Idle,
    Planner,
    Priority,
    RunContext,
    call_columns,
)
from arena.scheduler import CallOutcome
from arena.store import RunLog
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
    """Id of a model's answer to a question: changes when anything it depends on does.

    An answer from a file depends on its text (or on its absence from the file).
    """
    payload: dict[str, Any] = {
        "model": t.model_fingerprint(model),
        "question": [q.id, list(q.turns)],
    }
    found = t.answer_files.get(model)
    if found is not None:
        turns = found.answers.get(q.id)
        payload["text"] = None if turns is None else list(turns)
    return stable_id("answer", payload)


def review_context(t: Tournament, reviewer: str) -> str:
    """Hash of everything a reviewer's reviews depend on besides the two answers."""
    return stable_id(
        "review-context",
        {
            "reviewer": t.model_fingerprint(reviewer),
            "template": t.review_template,
            # The reviewer's own `review:` settings, else the section's.
            "temperature": t.review_settings(reviewer)[0],
            "max_tokens": t.review_settings(reviewer)[1],
        },
    )


def question_context(t: Tournament, q: Question, context: str) -> str:
    """A reviewer's context for one question: with its reference when the template shows it."""
    if q.reference is None or not uses_reference(t.review_template):
        return context
    return stable_id("review-context", [context, list(q.reference)])


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
        qctx = {r: question_context(t, q, contexts[r]) for r in t.reviewers}
        answers.extend(AnswerCall(ids[m], q, m) for m in t.contestants)
        for a in t.contestants:
            for b in t.contestants:
                if a == b:
                    continue
                for r in t.reviewers:
                    rid = review_id(q.id, ids[a], ids[b], qctx[r])
                    reviews.append(ReviewCall(rid, q, a, b, r, ids[a], ids[b]))
    return Plan(tuple(answers), tuple(reviews))


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


def base_row(
    call_id: str, provider: str, outcomes: Sequence[CallOutcome], run_id: str
) -> dict[str, Any]:
    """The common call columns of a logged row, over every outcome of the call."""
    return {"id": call_id, "provider": provider, **call_columns(outcomes), "run_id": run_id}


class AllPairsPlanner(Planner):
    """Every answer of a plan, then each review as soon as both of its answers are logged.

    Answers logged ok earlier are read from the log (their texts feed the
    review prompts); calls logged with a result are counted skipped. Stages
    above read `answers` (id -> turns of every answer logged ok),
    `failed_answers` and `settled`.
    """

    def __init__(self, t: Tournament, plan: Plan) -> None:
        self.t = t
        self.plan = plan
        self.answers: dict[str, list[str]] = {}
        self.failed_answers: set[str] = set()
        # Turns of unfinished answers logged earlier (partial, or failed at a
        # later turn): the answer resumes after them instead of paying again.
        self.logged_turns: dict[str, list[str]] = {}
        self._todo: deque[AnswerCall] = deque()
        self._ready: deque[ReviewCall] = deque()
        self._waiting: dict[str, list[ReviewCall]] = defaultdict(list)
        self._mine: dict[str, AnswerCall | ReviewCall] = {}
        self._open = 0  # calls handed to the runner whose result has not come back
        self._open_answers = 0

    @property
    def settled(self) -> bool:
        """Whether no answer or review of this planner can still run in this run."""
        return not self._todo and not self._ready and self._open == 0

    @property
    def answers_settled(self) -> bool:
        """Whether no answer can still end in this run (each is logged, failed or left pending)."""
        return not self._todo and self._open_answers == 0

    def start(self, ctx: RunContext) -> None:
        frame = ctx.log.read("answers", columns=["status", "answer_turns"])
        for rid, status, turns in frame.iter_rows():
            if status == CallStatus.OK.value:
                self.answers[rid] = list(turns)
                continue
            if status == CallStatus.FAILED.value:
                self.failed_answers.add(rid)
            if turns:
                self.logged_turns[rid] = list(turns)
        stats = ctx.stats
        # Answers from a file are records, not calls: logged, never counted.
        calls = [a for a in self.plan.answers if not self.t.from_file(a.model)]
        stats.plan("answers", len(calls))
        for a in self.plan.answers:
            if a.id not in self.answers:
                self._todo.append(a)
            elif not self.t.from_file(a.model):
                stats.skip("answers")
        ctx.mark_logged(list(self.answers))
        self.start_reviews(ctx)

    def start_reviews(self, ctx: RunContext) -> None:
        """Count the plan's reviews and queue those not logged yet.

        A sampled design (arena.sampling) overrides this to queue only the
        reviews it selects, and adds more with `queue_review` as rounds end.
        """
        done_reviews = ctx.log.ids(
            "reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value}
        )
        ctx.stats.plan("reviews", len(self.plan.reviews))
        for r in self.plan.reviews:
            if r.id in done_reviews:
                ctx.stats.skip("reviews")
            else:
                self._maybe_ready(r)

    def queue_review(self, review: ReviewCall) -> None:
        """Ask for a review (once both of its answers are logged)."""
        self._maybe_ready(review)

    def _maybe_ready(self, review: ReviewCall) -> None:
        missing = [a for a in (review.answer_a_id, review.answer_b_id) if a not in self.answers]
        if missing:
            self._waiting[missing[0]].append(review)
        else:
            self._ready.append(review)

    def next_call(self) -> Call | Idle:
        if self._todo:
            a = self._todo.popleft()
            self._mine[a.id] = a
            self._open += 1
            self._open_answers += 1
            return self._answer_call(a)
        if self._ready:
            r = self._ready.popleft()
            self._mine[r.id] = r
            self._open += 1
            return self._review_call(r)
        return Idle.LATER if self._open else Idle.DONE

    def on_result(self, result: CallResult) -> None:
        call = self._mine.pop(result.call.id, None)
        if call is None:
            return
        self._open -= 1
        if isinstance(call, AnswerCall):
            self._open_answers -= 1
            row = result.row
            if result.status == "ok" and row is not None:
                self.answers[call.id] = list(row["answer_turns"])
                for review in self._waiting.pop(call.id, []):
                    self._maybe_ready(review)
            elif result.status == "failed":
                self.failed_answers.add(call.id)

    # -- answers -----------------------------------------------------------------

    def _answer_call(self, call: AnswerCall) -> Call:
        t = self.t
        if t.from_file(call.model):
            return self._file_answer(call)
        model = t.model(call.model)
        provider = t.provider_of(call.model)
        model_id = t.provider_model_id(call.model)
        turns = call.question.turns
        logged = self.logged_turns.get(call.id, [])[: len(turns) - 1]

        def texts(outcomes: Sequence[CallOutcome]) -> list[str]:
            """The answer's turns so far: those logged earlier, then these outcomes'."""
            return logged + [o.result.text for o in outcomes if o.ok and o.result is not None]

        def request_for(outcomes: Sequence[CallOutcome]) -> GenerateRequest | None:
            done = texts(outcomes)
            if len(done) >= len(turns):
                return None
            messages: list[Message] = []
            for i, turn in enumerate(turns[: len(done) + 1]):
                messages.append(Message("user", turn))
                if i < len(done):
                    messages.append(Message("assistant", done[i]))
            return GenerateRequest(
                model=model_id,
                messages=tuple(messages),
                temperature=model.temperature,
                max_tokens=model.max_tokens,
            )

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            row = base_row(call.id, provider, outcomes, run_id)
            row.update(question_id=call.question.id, model=call.model)
            last = outcomes[-1]
            done = texts(outcomes)
            if last.ok and len(done) == len(turns):
                row.update(status=CallStatus.OK.value, error=None, answer_turns=done)
                return Finished(CallStatus.OK, (row,))
            # A later turn failed: the turns paid for stay, and a retry resumes after them.
            row.update(status=CallStatus.FAILED.value, error=last.error, answer_turns=done or None)
            return Finished(CallStatus.FAILED, (row,))

        def checkpoint(outcomes: Sequence[CallOutcome], run_id: str) -> dict[str, Any]:
            row = base_row(call.id, provider, outcomes, run_id)
            row.update(
                question_id=call.question.id,
                model=call.model,
                status=CallStatus.PARTIAL.value,
                error=None,
                answer_turns=texts(outcomes),
            )
            return row

        def first() -> GenerateRequest:
            request = request_for(())
            assert request is not None
            return request

        return Call(
            id=call.id,
            table="answers",
            stage="answers",
            provider=provider,
            request=first,
            finish=finish,
            follow=request_for,
            priority=Priority.FOLLOW_UP if logged else Priority.ANSWER,
            checkpoint=checkpoint if len(turns) > 1 else None,
        )

    def _file_answer(self, call: AnswerCall) -> Call:
        """A contestant's answer read from its file: logged like any answer, with no call."""
        found = self.t.answer_files[call.model]
        turns = found.answers.get(call.question.id)
        problem = found.problems.get(call.question.id, f"no answer in {found.path.name}")

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            now = time.time()
            row = base_row(call.id, FILE_PROVIDER, (), run_id)  # no call: nothing spent
            row.update(started_at=now, finished_at=now, question_id=call.question.id)
            row.update(model=call.model)
            if turns is None:
                row.update(status=CallStatus.FAILED.value, error=problem, answer_turns=None)
                return Finished(CallStatus.FAILED, (row,))
            row.update(status=CallStatus.OK.value, error=None, answer_turns=list(turns))
            return Finished(CallStatus.OK, (row,))

        return Call(
            id=call.id,
            table="answers",
            stage="answers",
            provider=FILE_PROVIDER,
            request=None,
            finish=finish,
            priority=Priority.ANSWER,
        )

    # -- reviews -----------------------------------------------------------------

    def _review_call(self, call: ReviewCall) -> Call:
        t = self.t
        provider = t.provider_of(call.reviewer)

        def request() -> GenerateRequest:
            # Rendered only now, when the call starts: no prompt waits in memory.
            prompt = render_review_prompt(
                t.review_template,
                call.question,
                self.answers[call.answer_a_id],
                self.answers[call.answer_b_id],
            )
            temperature, max_tokens = t.review_settings(call.reviewer)
            return GenerateRequest(
                model=t.provider_model_id(call.reviewer),
                messages=(Message("user", prompt),),
                temperature=temperature,
                max_tokens=max_tokens,
            )

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            outcome = outcomes[-1]
            row = base_row(call.id, provider, outcomes, run_id)
            row.update(
                question_id=call.question.id,
                model_a=call.model_a,
                model_b=call.model_b,
                reviewer=call.reviewer,
                answer_a_id=call.answer_a_id,
                answer_b_id=call.answer_b_id,
            )
            if outcome.ok and outcome.result is not None:
                verdict = parse_verdict(outcome.result.text)
                status = CallStatus.INVALID if verdict is Verdict.INVALID else CallStatus.OK
                row.update(
                    status=status.value, error=None, text=outcome.result.text, verdict=verdict.value
                )
                return Finished(status, (row,))
            row.update(status=CallStatus.FAILED.value, error=outcome.error, text=None, verdict=None)
            return Finished(CallStatus.FAILED, (row,))

        return Call(
            id=call.id,
            table="reviews",
            stage="reviews",
            provider=provider,
            request=request,
            finish=finish,
            after=(call.answer_a_id, call.answer_b_id),
            priority=Priority.REVIEW,
        )


def load_done(log: RunLog) -> tuple[dict[str, list[str]], set[str]]:
    """Answers already logged ok (id -> turns) and ids of reviews logged with a result."""
    answers_df = log.read("answers", columns=["status", "answer_turns"])
    ok = answers_df.filter(answers_df["status"] == CallStatus.OK.value)
    done_answers = {
        rid: list(turns)
        for rid, turns in zip(ok["id"].to_list(), ok["answer_turns"].to_list(), strict=True)
    }
    done_reviews = log.ids("reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value})
    return done_answers, done_reviews


__all__ = [
    "AllPairsPlanner",
    "AnswerCall",
    "Plan",
    "ReviewCall",
    "answer_id",
    "base_row",
    "build_plan",
    "load_done",
    "make_providers",
    "review_context",
    "review_id",
    "question_context",
]
