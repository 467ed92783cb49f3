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

import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from arena.config import FILE_PROVIDER, Question, Tournament
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
from arena.session import make_providers
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


# Reviews parked at once waiting for an answer still coming (the plan cursor waits beyond).
_MAX_PARKED = 65_536


class ReviewCalls(Sequence[ReviewCall]):
    """The reviews of a plan held as columns: a `ReviewCall` is made only when asked for.

    Per review: question, model A, model B and reviewer as small integer codes
    and the id as 26 ASCII bytes, about 40 bytes in all (a `ReviewCall` with
    its strings takes ten times that). Iterating yields the calls in plan order.
    """

    def __init__(
        self,
        questions: tuple[Question, ...],
        models: tuple[str, ...],
        reviewers: tuple[str, ...],
        answer_ids: tuple[tuple[str, ...], ...],
        codes: NDArray[np.int32],
        ids: NDArray[np.bytes_],
    ) -> None:
        self.questions = questions
        self.models = models
        self.reviewers = reviewers
        self.answer_ids = answer_ids  # [question][model]
        self.codes = codes  # (n, 4): question, model_a, model_b, reviewer
        self.ids = ids

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReviewCalls):
            return (
                self.questions == other.questions
                and self.models == other.models
                and self.reviewers == other.reviewers
                and self.answer_ids == other.answer_ids
                and np.array_equal(self.codes, other.codes)
                and np.array_equal(self.ids, other.ids)
            )
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> ReviewCall: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ReviewCall]: ...

    def __getitem__(self, index: int | slice) -> ReviewCall | Sequence[ReviewCall]:
        if isinstance(index, slice):
            return [self._call(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._call(index)

    def __iter__(self) -> Iterator[ReviewCall]:
        for start in range(0, len(self), 4096):
            rows = self.codes[start : start + 4096].tolist()
            ids = self.ids[start : start + 4096].tolist()
            for (q, a, b, r), rid in zip(rows, ids, strict=True):
                yield self._make(rid.decode("ascii"), q, a, b, r)

    def id_at(self, index: int) -> str:
        """The id of review `index` (no call built)."""
        return str(self.ids[index].decode("ascii"))

    def _call(self, index: int) -> ReviewCall:
        q, a, b, r = self.codes[index].tolist()
        return self._make(self.id_at(index), q, a, b, r)

    def _make(self, rid: str, q: int, a: int, b: int, r: int) -> ReviewCall:
        answer_ids = self.answer_ids[q]
        return ReviewCall(
            rid,
            self.questions[q],
            self.models[a],
            self.models[b],
            self.reviewers[r],
            answer_ids[a],
            answer_ids[b],
        )


@dataclass(frozen=True)
class Plan:
    """Every call a tournament needs, with stable content-derived ids."""

    answers: tuple[AnswerCall, ...]
    reviews: Sequence[ReviewCall]

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


def _review_ids(question_id: str, pairs: list[tuple[str, str]], contexts: list[str]) -> list[str]:
    """`review_id` of every (answer pair, context) of one question, pairs outermost.

    The same bytes `stable_id` hashes, assembled once per question: the
    question id is JSON-encoded once; answer ids and contexts are plain ASCII.
    """
    head = '{"kind": "review", "payload": [' + json.dumps(question_id) + ', "'
    out: list[str] = []
    for a_id, b_id in pairs:
        stem = f'{head}{a_id}", "{b_id}", "'
        for context in contexts:
            digest = hashlib.sha256(f'{stem}{context}"]}}'.encode()).hexdigest()
            out.append(f"r-{digest[:24]}")
    return out


def build_plan(t: Tournament) -> Plan:
    """One answer per (contestant, question); one review per (question, i != j, reviewer).

    Reviews are held as columns (`ReviewCalls`), questions outermost, then
    model A, model B, reviewer.
    """
    models = tuple(t.contestants)
    reviewers = tuple(t.reviewers)
    contexts = [review_context(t, r) for r in reviewers]
    pairs = [(a, b) for a in range(len(models)) for b in range(len(models)) if a != b]
    per_question = len(pairs) * len(reviewers)
    n = per_question * len(t.questions)
    codes = np.empty((n, 4), dtype=np.int32)
    if n:
        pair_codes = np.array(pairs, dtype=np.int32)
        codes[:, 0] = np.repeat(np.arange(len(t.questions), dtype=np.int32), per_question)
        codes[:, 1] = np.tile(np.repeat(pair_codes[:, 0], len(reviewers)), len(t.questions))
        codes[:, 2] = np.tile(np.repeat(pair_codes[:, 1], len(reviewers)), len(t.questions))
        codes[:, 3] = np.tile(
            np.arange(len(reviewers), dtype=np.int32), len(pairs) * len(t.questions)
        )
    ids = np.empty(n, dtype="S26")
    answers: list[AnswerCall] = []
    answer_ids: list[tuple[str, ...]] = []
    for k, q in enumerate(t.questions):
        row = tuple(answer_id(t, m, q) for m in models)
        answer_ids.append(row)
        answers.extend(AnswerCall(row[i], q, m) for i, m in enumerate(models))
        ids[k * per_question : (k + 1) * per_question] = _review_ids(
            q.id,
            [(row[a], row[b]) for a, b in pairs],
            [question_context(t, q, c) for c in contexts],
        )
    reviews = ReviewCalls(t.questions, models, reviewers, tuple(answer_ids), codes, ids)
    return Plan(tuple(answers), reviews)


def base_row(
    call_id: str, provider: str, outcomes: Sequence[CallOutcome], run_id: str
) -> dict[str, Any]:
    """The common call columns of a logged row, over every outcome of the call."""
    return {"id": call_id, "provider": provider, **call_columns(outcomes), "run_id": run_id}


@dataclass(frozen=True)
class Round:
    """Reviews a selector asks for, in order: indices into the plan's reviews.

    `record`, when given, is a record call (rows and no provider call: the
    round's selection) that the planner hands to the runner before the
    round's reviews, which wait until it is logged. `planned`, when given, is
    the review count the run plans from now on (a design that ends early).
    """

    reviews: Sequence[int] = ()
    record: Call | None = None
    planned: int | None = None


@dataclass(frozen=True)
class Selection:
    """What a selector asks for at the start: reviews planned, already logged, first rounds."""

    planned: int
    skipped: int
    rounds: Sequence[Round]


class ReviewSelector(ABC):
    """Chooses which reviews of the plan the all-pairs planner asks for, and when.

    Without a selector the planner asks for every review of the plan not yet
    logged. With one, it asks for the rounds the selector gives: at the start
    (`start`), then after any result (`on_result`, called once the planner
    has taken the result in; an empty list: nothing more for now). A sampled
    design gives rounds chosen from the verdicts so far; a fixed design (every
    contestant against one baseline, a new model against chosen opponents)
    gives all of its reviews at the start. A selector does not count calls:
    the planner counts what `Selection` and `Round.planned` say.
    """

    @abstractmethod
    def start(self, ctx: RunContext) -> Selection:
        """Before any call: read the log; the reviews to plan and the first rounds."""

    def on_result(self, result: CallResult) -> Sequence[Round]:
        """A call of the run ended (an answer, a review, any stage's call): more rounds, if any."""
        return ()

    def report(self) -> dict[str, Any] | None:
        """What the run summary reports of the selection (`RunSummary.sampling`), if anything."""
        return None


class AllPairsPlanner(Planner):
    """Every answer of a plan, then each review as soon as both of its answers are logged.

    Answers logged ok earlier are read from the log (their texts feed the
    review prompts); calls logged with a result are counted skipped. Stages
    above read `answers` (id -> turns of every answer logged ok),
    `failed_answers` and `settled`.
    """

    def __init__(self, t: Tournament, plan: Plan, selector: ReviewSelector | None = None) -> None:
        self.t = t
        self.plan = plan
        self.selector = selector
        self.answers: dict[str, list[str]] = {}
        self.failed_answers: set[str] = set()
        # Turns of unfinished answers logged earlier (partial, or failed at a
        # later turn): the answer resumes after them instead of paying again.
        self.logged_turns: dict[str, list[str]] = {}
        self._todo: deque[AnswerCall] = deque()
        self._coming: set[str] = set()  # answers this run will still make (queued or in flight)
        # Reviews go by their index in the plan: a cursor walks the plan, a review whose
        # answers are both logged is ready, one waiting for an answer still coming is parked
        # (at most _MAX_PARKED: then the cursor waits), one whose answer is not coming stays
        # pending. No review is held as an object before it is asked for.
        self._cursor = 0
        self._skip: NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._ready: deque[int] = deque()
        self._waiting: dict[str, list[int]] = defaultdict(list)
        self._parked = 0
        self._mine: dict[str, AnswerCall | ReviewCall] = {}
        self._open = 0  # calls handed to the runner whose result has not come back
        self._open_answers = 0
        self._ctx: RunContext | None = None
        # A selector's round records: queued, then handed out until their result comes back.
        self._records: deque[Call] = deque()
        self._records_open: set[str] = set()
        self._after: dict[int, str] = {}  # review index -> the record its round waits on

    @property
    def settled(self) -> bool:
        """Whether no answer or review of this planner can still run in this run."""
        return (
            not self._todo
            and not self._ready
            and self._open == 0
            and self._cursor >= len(self.plan.reviews)
            and not self._records
            and not self._records_open
        )

    @property
    def answers_settled(self) -> bool:
        """Whether no answer can still end in this run (each is logged, failed or left pending)."""
        return not self._todo and self._open_answers == 0

    def start(self, ctx: RunContext) -> None:
        self._ctx = ctx
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
                self._coming.add(a.id)
            elif not self.t.from_file(a.model):
                stats.skip("answers")
        ctx.mark_logged(list(self.answers))
        self.start_reviews(ctx)

    def start_reviews(self, ctx: RunContext) -> None:
        """Count the plan's reviews and queue those not logged yet (or the selector's)."""
        reviews = self.plan.reviews
        if self.selector is not None:
            selection = self.selector.start(ctx)
            ctx.stats.plan("reviews", selection.planned)
            if selection.skipped:
                ctx.stats.skip("reviews", selection.skipped)
            self._cursor = len(reviews)  # reviews come from the selector, not from the plan
            for round_ in selection.rounds:
                self._take(round_)
            return
        done_reviews = ctx.log.ids(
            "reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value}
        )
        ctx.stats.plan("reviews", len(reviews))
        ids = reviews.ids if isinstance(reviews, ReviewCalls) else (r.id for r in reviews)
        if done_reviews:
            self._skip = np.fromiter(
                ((rid.decode() if isinstance(rid, bytes) else rid) in done_reviews for rid in ids),
                dtype=bool,
                count=len(reviews),
            )
            ctx.stats.skip("reviews", int(self._skip.sum()))
        else:
            self._skip = np.zeros(len(reviews), dtype=bool)

    def _take(self, round_: Round) -> None:
        """Queue a selector's round: its record first, then its reviews (waiting on the record)."""
        if round_.record is not None:
            self._records.append(round_.record)
        for index in round_.reviews:
            if round_.record is not None:
                self._after[index] = round_.record.id
            self._place(index)
        if round_.planned is not None and self._ctx is not None:
            self._ctx.stats.replan("reviews", round_.planned)

    def selection_report(self) -> dict[str, Any] | None:
        """The selector's report for the run summary (None without a selector)."""
        return None if self.selector is None else self.selector.report()

    def _answer_ids(self, index: int) -> tuple[str, str]:
        reviews = self.plan.reviews
        if isinstance(reviews, ReviewCalls):
            q, a, b = reviews.codes[index, :3].tolist()
            row = reviews.answer_ids[q]
            return row[a], row[b]
        review = reviews[index]
        return review.answer_a_id, review.answer_b_id

    def _place(self, index: int) -> None:
        """Make review `index` ready, park it on an answer still coming, or leave it pending."""
        for answer in self._answer_ids(index):
            if answer not in self.answers:
                if answer in self._coming:
                    self._waiting[answer].append(index)
                    self._parked += 1
                return  # its answer will not be made in this run: the review stays pending
        self._ready.append(index)

    def next_call(self) -> Call | Idle:
        if self._records:
            record = self._records.popleft()
            self._records_open.add(record.id)
            return record
        if self._todo:
            a = self._todo.popleft()
            self._mine[a.id] = a
            self._open += 1
            self._open_answers += 1
            return self._answer_call(a)
        n = len(self.plan.reviews)
        while not self._ready and self._cursor < n and self._parked < _MAX_PARKED:
            index = self._cursor
            self._cursor += 1
            if not self._skip[index]:
                self._place(index)
        if self._ready:
            index = self._ready.popleft()
            r = self.plan.reviews[index]
            self._mine[r.id] = r
            self._open += 1
            made = self._review_call(r)
            waits_on = self._after.pop(index, None)
            return made if waits_on is None else replace(made, after=(*made.after, waits_on))
        return Idle.LATER if self._open or self._records_open else Idle.DONE

    def on_result(self, result: CallResult) -> None:
        if result.call.id in self._records_open:
            self._records_open.discard(result.call.id)
            return
        self._take_result(result)
        if self.selector is not None:
            for round_ in self.selector.on_result(result):
                self._take(round_)

    def _take_result(self, result: CallResult) -> None:
        call = self._mine.pop(result.call.id, None)
        if call is None:
            return
        self._open -= 1
        if isinstance(call, AnswerCall):
            self._open_answers -= 1
            self._coming.discard(call.id)
            waiting = self._waiting.pop(call.id, [])
            self._parked -= len(waiting)
            row = result.row
            if result.status == "ok" and row is not None:
                self.answers[call.id] = list(row["answer_turns"])
                for index in waiting:
                    self._place(index)
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
            awaited=False,  # no call waits for a review
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
    "ReviewCalls",
    "ReviewSelector",
    "Round",
    "Selection",
    "answer_id",
    "base_row",
    "build_plan",
    "load_done",
    "make_providers",
    "review_context",
    "review_id",
    "question_context",
]
