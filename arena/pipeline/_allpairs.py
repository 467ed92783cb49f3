"""The all-pairs planner of answers and reviews, and the review selector it may ask.

Answers and reviews flow without a barrier: a review is asked for as soon as
both of its answers are logged. The planner only says what to ask and what the
outcomes become; `arena.runner.Runner` runs the calls (all waiting happens in
the scheduler, all writing goes through the one log writer). Extra stages
(discussion, BatchEval) are planners too; they live above this module and
read this planner's `plan`, `answers` and `settled` state. A stage that
chooses which reviews to make (a sampled design) is a `ReviewSelector`.
"""

from __future__ import annotations

import heapq
import time
from abc import ABC, abstractmethod
from collections import Counter, defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.config import FILE_PROVIDER, REVIEW_TEMPLATES, Tournament
from arena.examples import example_ids, render_examples
from arena.pipeline._plan import AnswerCall, Plan, ReviewCall, settled_reviews
from arena.review import (
    parse_review,
    render_review_prompt,
    render_review_with_breaks,
    review_cache_key,
    verdict_scheme,
)
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
from arena.types import CallStatus, GenerateRequest, Message, Verdict

__all__ = ["AllPairsPlanner", "ReviewSelector", "Round", "Selection", "base_row"]

# Reviews parked at once waiting for an answer still coming (the plan cursor waits beyond).
_MAX_PARKED = 65_536


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
        self.verdicts = verdict_scheme(t.config.review)  # the template's declared tokens
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
        # Ready reviews go out in plan order (question, model A, model B, reviewer), however
        # they became ready (answers arriving in any order, a selector's rounds): each
        # reviewer's calls then come grouped by question and first answer, one after the
        # other, the order in which its prompts share a cached prefix (docs/cost.md).
        self._ready: list[int] = []  # a heap of plan indices
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
        # A selector's reviews whose prefix through answer A no other review of their
        # round shares (same question, first answer and reviewer): not marked for the
        # cache, as an Anthropic write costs 1.25x and nothing would read it back (a
        # later round goes out after this one's results, in batch mode a job later,
        # long after the 5-minute entry expired).
        self._lone_prefix: set[int] = set()

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
        ctx.stats.plan("reviews", len(reviews))
        # A mask over the plan (no set of the logged ids: see `settled_reviews`).
        self._skip = settled_reviews(ctx.log, reviews.ids)
        skipped = int(self._skip.sum())
        if skipped:
            ctx.stats.skip("reviews", skipped)

    def _take(self, round_: Round) -> None:
        """Queue a selector's round: its record first, then its reviews (waiting on the record)."""
        if round_.record is not None:
            self._records.append(round_.record)
        codes = self.plan.reviews.codes
        firsts = Counter(tuple(codes[index, [0, 1, 3]].tolist()) for index in round_.reviews)
        for index in round_.reviews:
            if firsts[tuple(codes[index, [0, 1, 3]].tolist())] == 1:
                self._lone_prefix.add(index)
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
        q, a, b = reviews.codes[index, :3].tolist()
        row = reviews.answer_ids[q]
        return row[a], row[b]

    def _place(self, index: int) -> None:
        """Make review `index` ready, park it on an answer still coming, or leave it pending."""
        for answer in self._answer_ids(index):
            if answer not in self.answers:
                if answer in self._coming:
                    self._waiting[answer].append(index)
                    self._parked += 1
                return  # its answer will not be made in this run: the review stays pending
        heapq.heappush(self._ready, index)

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
            index = heapq.heappop(self._ready)
            r = self.plan.reviews[index]
            self._mine[r.id] = r
            self._open += 1
            made = self._review_call(r, self._prefix_shared(index))
            self._lone_prefix.discard(index)
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

    def _prefix_shared(self, index: int) -> bool:
        """Whether another review going out with it shows the same first answer to its reviewer."""
        if self.selector is None:  # every ordered pair: each answer is first N - 1 times
            return len(self.plan.reviews.models) > 2
        return index not in self._lone_prefix

    def _review_call(self, call: ReviewCall, prefix_shared: bool = True) -> Call:
        t = self.t
        provider = t.provider_of(call.reviewer)
        scheme = self.verdicts

        def request() -> GenerateRequest:
            # Rendered only now, when the call starts: no prompt waits in memory.
            temperature, max_tokens = t.review_settings(call.reviewer)
            answer_a, answer_b = self.answers[call.answer_a_id], self.answers[call.answer_b_id]
            examples = "" if t.examples is None else render_examples(t.examples, call.question)
            if examples or t.review_template_path != REVIEW_TEMPLATES["cache_friendly"]:
                # (with examples, the prompt's shared prefix is the examples block: no hints)
                prompt = render_review_prompt(
                    t.review_template, call.question, answer_a, answer_b, examples
                )
                return GenerateRequest(
                    model=t.provider_model_id(call.reviewer),
                    messages=(Message("user", prompt),),
                    temperature=temperature,
                    max_tokens=max_tokens,
                )
            # The cache-friendly layout: cache hints after the question and after
            # answer A (Anthropic breakpoints; writes cost 1.25x, so not for the
            # default layout, whose shared prefix is short), one cache key per question.
            prompt, breaks = render_review_with_breaks(
                t.review_template, call.question, answer_a, answer_b
            )
            if not prefix_shared:  # no break after answer A: a write nobody would read
                breaks = breaks[:-1]
            return GenerateRequest(
                model=t.provider_model_id(call.reviewer),
                messages=(Message("user", prompt),),
                temperature=temperature,
                max_tokens=max_tokens,
                cache_breaks=breaks,
                cache_key=review_cache_key(call.question.id),
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
            if t.examples is not None:
                row["example_ids"] = example_ids(t.examples, call.question)
            if outcome.ok and outcome.result is not None:
                parsed = parse_review(outcome.result.text, scheme)
                verdict = parsed.verdict
                status = CallStatus.INVALID if verdict is Verdict.INVALID else CallStatus.OK
                row.update(
                    status=status.value, error=None, text=outcome.result.text, verdict=verdict.value
                )
                if parsed.p_a is not None or parsed.weight is not None:  # a graded verdict
                    row.update(p_a=parsed.p_a, weight=parsed.weight)
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
