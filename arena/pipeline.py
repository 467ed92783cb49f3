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

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.config import Question, Tournament
from arena.providers import Provider, create_provider
from arena.review import parse_verdict, render_review_prompt
from arena.runner import Call, CallResult, Finished, Idle, Planner, Priority, RunContext
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
        "run_id": run_id,
    }


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
            elif status == CallStatus.FAILED.value:
                self.failed_answers.add(rid)
        done_reviews = ctx.log.ids(
            "reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value}
        )
        stats = ctx.stats
        stats.plan("answers", len(self.plan.answers))
        stats.plan("reviews", len(self.plan.reviews))
        for a in self.plan.answers:
            if a.id in self.answers:
                stats.skip("answers")
            else:
                self._todo.append(a)
        ctx.mark_logged(list(self.answers))
        for r in self.plan.reviews:
            if r.id in done_reviews:
                stats.skip("reviews")
            else:
                self._maybe_ready(r)

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
        model = t.model(call.model)
        provider = t.provider_of(call.model)
        model_id = t.provider_model_id(call.model)
        turns = call.question.turns

        def request_for(outcomes: Sequence[CallOutcome]) -> GenerateRequest | None:
            if len(outcomes) >= len(turns):
                return None
            messages: list[Message] = []
            for i, turn in enumerate(turns[: len(outcomes) + 1]):
                messages.append(Message("user", turn))
                if i < len(outcomes):
                    result = outcomes[i].result
                    assert result is not None
                    messages.append(Message("assistant", result.text))
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
            if last.ok and len(outcomes) == len(turns):
                texts = [o.result.text for o in outcomes if o.result is not None]
                row.update(status=CallStatus.OK.value, error=None, answer_turns=texts)
                return Finished(CallStatus.OK, (row,))
            row.update(status=CallStatus.FAILED.value, error=last.error, answer_turns=None)
            return Finished(CallStatus.FAILED, (row,))

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
            return GenerateRequest(
                model=t.provider_model_id(call.reviewer),
                messages=(Message("user", prompt),),
                temperature=t.config.review.temperature,
                max_tokens=t.config.review.max_tokens,
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
]
