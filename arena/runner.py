"""One runner for every stage: calls from planners, through the scheduler, into the log.

A `Planner` knows what to ask next and what to do with a result (the all-pairs
answers and reviews, PeerDiscussion, BatchEval rounds). A `Call` carries
everything the runner needs: its id, table, stage, provider, priority, the ids
it depends on, how to build its request (only when it starts) and how its
outcomes become rows. The `Runner` takes calls from the planners only while
fewer than `window` calls are in flight (backpressure), starts a call once
its dependencies are logged, runs it through the scheduler, writes its rows
through the one log writer, and hands the result to every planner. Nothing
here knows about tournaments; the planners live above this module.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum, IntEnum
from typing import Any, Literal

from arena.scheduler import CallOutcome, Scheduler, batch_custom_id
from arena.store import LogWriter, RunLog, StorageError, failure_reason, usage_columns
from arena.types import CallStatus, GenerateRequest, Limits, Usage

__all__ = [
    "Call",
    "CheckpointFn",
    "FinishFn",
    "FollowFn",
    "ResultStatus",
    "call_columns",
    "error_lines",
    "CallResult",
    "Finished",
    "Idle",
    "Planner",
    "Priority",
    "ProgressFn",
    "RunContext",
    "RunStats",
    "RunSummary",
    "Runner",
    "StageStats",
    "default_window",
    "token_totals",
]

ProgressFn = Callable[[str, int, int], None]


class Priority(IntEnum):
    """How urgent a call is; the runner passes it to `Scheduler.call` (higher first)."""

    BACKGROUND = 0  # discussion turns, BatchEval batches
    REVIEW = 1
    ANSWER = 2
    FOLLOW_UP = 3  # a later request of a call already under way (next turn, re-ask)


class Idle(Enum):
    """What a planner with no call ready says."""

    LATER = "later"  # nothing now; results still to come may give more work
    DONE = "done"  # this planner will never ask for anything again


@dataclass(frozen=True)
class Finished:
    """What a call's outcomes become: how it counts and the rows to log."""

    status: CallStatus
    rows: tuple[dict[str, Any], ...]


FinishFn = Callable[[Sequence[CallOutcome], str], Finished]  # (outcomes, run id)
FollowFn = Callable[[Sequence[CallOutcome]], "GenerateRequest | None"]
CheckpointFn = Callable[[Sequence[CallOutcome], str], dict[str, Any]]  # (outcomes, run id)


def call_columns(outcomes: Sequence[CallOutcome]) -> dict[str, Any]:
    """The accounting columns of a row over `outcomes`: tokens, cost, latency, attempts, times.

    Every row counts only the attempts no earlier row of its call counts, so
    the sum over every row of the log is what was spent.
    """
    return {
        # billed tokens (cache and reasoning details too), failed attempts included
        **usage_columns(o.usage for o in outcomes),
        "cost_usd": sum(o.cost_usd for o in outcomes),
        "latency_s": sum(o.latency_s for o in outcomes),
        "attempts": sum(o.attempts for o in outcomes),
        "started_at": outcomes[0].started_at if outcomes else None,
        "finished_at": outcomes[-1].finished_at if outcomes else None,
    }


@dataclass(frozen=True, eq=False)
class Call:
    """One unit of work: zero or more provider requests whose outcomes become rows.

    - `request` builds the first request when the call starts (None: a record,
      rows written without any provider call, not counted).
    - `follow`, after each ok outcome, gives the next request of the same call
      (a later turn, a re-ask) or None when the call is complete.
    - `finish` turns the outcomes (every one final) into rows and a status.
    - `checkpoint`, when set, gives the row of the call still under way (status
      `partial`, with what the outcomes so far produced); the runner logs it
      after each ok outcome that `follow` continues, so turns already paid
      for survive a stop, and the planner resumes from them. Rows written
      after a checkpoint count only the outcomes since (`call_columns`).
    - `stopped`, when set, gives the rows (status `partial`) of a call whose
      next request did not run (a stop, the budget, a deferral) after ok
      outcomes: what those outcomes produced is logged rather than paid for
      again, and the planner resumes from it. Without it (and without
      `checkpoint`) such a call logs nothing.
    - `after`: ids of calls that must be logged ok (or invalid) first.
    - `awaited`: whether other calls may name this one in `after`; the runner
      remembers the ids of awaited calls once logged (a million reviews that
      nothing waits for are not kept).
    """

    id: str
    table: str
    stage: str
    provider: str
    request: Callable[[], GenerateRequest] | None
    finish: FinishFn
    follow: FollowFn | None = None
    after: tuple[str, ...] = ()
    priority: int = Priority.BACKGROUND
    checkpoint: CheckpointFn | None = None
    awaited: bool = True
    stopped: FinishFn | None = None


ResultStatus = Literal["ok", "invalid", "failed", "pending"]


@dataclass(frozen=True)
class CallResult:
    """How a call ended. `pending`: stopped, deferred or refused by the budget; nothing logged."""

    call: Call
    status: ResultStatus
    rows: tuple[dict[str, Any], ...]
    outcome: CallOutcome | None  # the last outcome (None for a record)

    @property
    def row(self) -> dict[str, Any] | None:
        """The first logged row (the only one for most calls)."""
        return self.rows[0] if self.rows else None


@dataclass
class StageStats:
    """Call counts of one stage."""

    planned: int = 0
    skipped: int = 0
    completed: int = 0
    failed: int = 0
    invalid: int = 0
    deferred: int = 0

    @property
    def done(self) -> int:
        """Calls that need nothing more from this run."""
        return self.skipped + self.completed + self.failed + self.invalid

    @property
    def pending(self) -> int:
        return self.planned - self.done

    def nonzero(self) -> dict[str, int]:
        """The outcome counts that are not zero (skipped ... deferred)."""
        counts = {
            "skipped": self.skipped,
            "completed": self.completed,
            "failed": self.failed,
            "invalid": self.invalid,
            "deferred": self.deferred,
        }
        return {k: v for k, v in counts.items() if v}

    def full(self) -> dict[str, int]:
        """Every count, planned and pending included."""
        return {
            "planned": self.planned,
            "skipped": self.skipped,
            "completed": self.completed,
            "failed": self.failed,
            "invalid": self.invalid,
            "pending": self.pending,
            "deferred": self.deferred,
        }


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
    # Why calls failed or stayed pending: per provider, model and reason, the
    # count and a sample message (see `RunStats.failure`).
    errors: list[dict[str, Any]] = field(default_factory=list)
    storage_error: str | None = None  # the log could not be written (disk full, read-only)
    # Unexpected exceptions (bugs) that failed calls, and why the run stopped for
    # them (after `arena.scheduler.MAX_INTERNAL_ERRORS`; None when it did not).
    internal_errors: int = 0
    stopped_by_errors: str | None = None
    # Lone surrogates (invalid Unicode) in texts from outside, replaced with
    # U+FFFD before they were logged.
    replaced_chars: int = 0
    # A sampled design (arena.sampling): strategy, budget, calls spent, rounds.
    sampling: dict[str, Any] | None = None
    # Tokens billed in this run: in (cache read and write of it), out (reasoning of it).
    tokens: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def error_lines(self) -> list[str]:
        """The errors as lines for people."""
        return error_lines(self.errors)


def token_totals(usage: Usage) -> dict[str, int]:
    """A run's token totals as `RunSummary.tokens` (counts a provider did not report: 0)."""
    return {
        "in": usage.input_tokens,
        "cache_read": usage.cache_read_tokens or 0,
        "cache_write": usage.cache_write_tokens or 0,
        "out": usage.output_tokens,
        "reasoning": usage.reasoning_tokens or 0,
    }


def error_lines(errors: Sequence[dict[str, Any]]) -> list[str]:
    """Error entries as lines: count, model and provider, reason, a sample message."""
    lines: list[str] = []
    for e in errors:
        if e.get("provider") is None:
            lines.append(str(e["sample"]))
            continue
        calls = "call" if e["count"] == 1 else "calls"
        lines.append(
            f"{e['count']} {calls} of {e['model']} on {e['provider']}: {e['reason']} "
            f"(e.g. {e['sample']})"
        )
    return lines


class RunStats:
    """Counts of every stage of a run, with progress reports as they change."""

    def __init__(self, progress: ProgressFn | None = None) -> None:
        self.progress = progress
        self.stages: dict[str, StageStats] = {}
        self.full_report: set[str] = set()  # stages whose summary lists every count
        self.usage = Usage(0, 0)  # tokens billed so far
        self._errors: dict[tuple[str | None, str | None, str], dict[str, Any]] = {}
        self.retries = 0  # attempts beyond the first, over every request
        bind = getattr(progress, "bind_stats", None)
        if bind is not None:  # a progress display that shows more than done / total
            bind(self)

    def billed(self, usage: Usage) -> None:
        """Tokens an outcome was billed for (final or not)."""
        self.usage = self.usage + usage

    def stage(self, name: str) -> StageStats:
        """The counts of a stage (created empty on first use)."""
        if name not in self.stages:
            self.stages[name] = StageStats()
        return self.stages[name]

    def plan(self, stage: str, n: int = 1) -> None:
        """`n` more calls planned."""
        self.stage(stage).planned += n

    def replan(self, stage: str, n: int) -> None:
        """The stage now plans `n` calls in all (a design that ended early), at least those done."""
        s = self.stage(stage)
        s.planned = max(n, s.done)

    def skip(self, stage: str, n: int = 1) -> None:
        """`n` planned calls were already logged."""
        self.stage(stage).skipped += n
        self._report(stage)

    def ended(self, stage: str, status: CallStatus) -> None:
        """A call was logged with a status."""
        s = self.stage(stage)
        if status is CallStatus.OK:
            s.completed += 1
        elif status is CallStatus.INVALID:
            s.invalid += 1
        else:
            s.failed += 1
        self._report(stage)

    def unlogged(
        self, stage: str, outcome: CallOutcome, provider: str | None = None, model: str = ""
    ) -> None:
        """A call ended stopped, deferred or refused by the budget: it stays pending."""
        if outcome.status == "deferred":
            self.stage(stage).deferred += 1
        if outcome.status in ("deferred", "budget") and provider is not None:
            reason = "deferred" if outcome.status == "deferred" else "budget reached"
            self.failure(provider, model, outcome.error, reason)

    def failure(
        self, provider: str, model: str, message: str | None, reason: str | None = None
    ) -> None:
        """One more call of `model` on `provider` that failed or stayed pending, and why."""
        why = reason if reason is not None else failure_reason(message)
        key = (provider, model, why)
        entry = self._errors.get(key)
        if entry is None:
            self._errors[key] = {
                "provider": provider,
                "model": model,
                "reason": why,
                "count": 1,
                "sample": (message or why)[:300],
            }
        else:
            entry["count"] += 1

    def error(self, message: str | None) -> None:
        """A note for the run summary that is about no one call (each once)."""
        if message and (None, None, message) not in self._errors:
            self._errors[(None, None, message)] = {
                "provider": None,
                "model": None,
                "reason": message,
                "count": 1,
                "sample": message,
            }

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The failure entries, most frequent first."""
        return sorted(
            (dict(e) for e in self._errors.values()),
            key=lambda e: (-e["count"], str(e["provider"]), str(e["model"]), e["reason"]),
        )

    def _report(self, stage: str) -> None:
        if self.progress is not None:
            s = self.stages[stage]
            self.progress(stage, s.done, max(s.planned, s.done))

    def summary(self, scheduler: Scheduler, wall_seconds: float) -> RunSummary:
        """The run summary: totals over the stages, per-stage counts, spend."""
        stages = self.stages.values()
        self.error(scheduler.stopped_by_errors)
        out = RunSummary(
            planned=sum(s.planned for s in stages),
            skipped=sum(s.skipped for s in stages),
            completed=sum(s.completed for s in stages),
            failed=sum(s.failed for s in stages),
            invalid=sum(s.invalid for s in stages),
            deferred=sum(s.deferred for s in stages),
            spent_usd=scheduler.spent_usd,
            budget_stopped=scheduler.budget_exhausted,
            wall_seconds=wall_seconds,
            errors=self.errors,
            internal_errors=scheduler.internal_errors,
            stopped_by_errors=scheduler.stopped_by_errors,
            tokens=token_totals(self.usage),
        )
        out.pending = out.planned - out.skipped - out.completed - out.failed - out.invalid
        for name, s in self.stages.items():
            if name in self.full_report:
                out.by_stage[name] = s.full()
            elif s.nonzero():
                out.by_stage[name] = s.nonzero()
        return out


@dataclass(eq=False)
class RunContext:
    """What planners get at start: the run id, the log to read, the counts, the scheduler state."""

    run_id: str
    log: RunLog
    stats: RunStats
    scheduler: Scheduler
    logged: set[str] = field(default_factory=set)  # ids that satisfy dependencies

    @property
    def stopped(self) -> bool:
        """Whether the scheduler was stopped (a signal): new calls would not run."""
        return self.scheduler.stopped

    def mark_logged(self, ids: Sequence[str] | set[str]) -> None:
        """Ids logged by earlier runs that other calls may depend on."""
        self.logged.update(ids)


class Planner(ABC):
    """Knows what to ask next and what to do with a result.

    The runner calls `start` once (in planner order), then `next_call`
    whenever it has room for a call; a planner returns a `Call`, or
    `Idle.LATER` (nothing now, maybe after results) or `Idle.DONE` (never
    again). Every result of every call, whichever planner made it, goes to
    `on_result` (after its rows are durable). When nothing is in flight and
    no planner has a call, `on_settled` is the last chance to add work (the
    run ends when none appears); `finish` runs once at the end.
    """

    def start(self, ctx: RunContext) -> None:  # noqa: B027 - optional hook
        """Before any call: read what the log holds, count planned and skipped calls."""

    @abstractmethod
    def next_call(self) -> Call | Idle:
        """The next call to run, or why there is none."""

    def on_result(self, result: CallResult) -> None:  # noqa: B027 - optional hook
        """A call ended (any planner's; logged or pending)."""

    def on_settled(self) -> None:  # noqa: B027 - optional hook
        """Nothing is in flight and no planner has a call ready."""

    def finish(self) -> None:  # noqa: B027 - optional hook
        """The run is over (completed, stopped or out of budget)."""


def default_window(limits: Mapping[str, Limits], unlimited: int = 256) -> int:
    """Calls in flight a run allows: four times the providers' total concurrency.

    A provider without `max_concurrency` adds `unlimited` calls; the window
    is at least 64.
    """
    total = sum(
        4 * lim.max_concurrency if lim.max_concurrency else unlimited for lim in limits.values()
    )
    return max(64, total)


class Runner:
    """Runs the calls of a set of planners through the scheduler into the log."""

    def __init__(
        self,
        planners: Sequence[Planner],
        scheduler: Scheduler,
        writer: LogWriter,
        log: RunLog,
        *,
        window: int = 256,
        progress: ProgressFn | None = None,
        run_id: str | None = None,
    ) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.planners = list(planners)
        self.scheduler = scheduler
        self.writer = writer
        self.window = window
        self.run_id = run_id if run_id is not None else uuid.uuid4().hex[:12]
        self.stats = RunStats(progress)
        self.ctx = RunContext(self.run_id, log, self.stats, scheduler)
        self.max_in_flight = 0  # the most calls in flight at once (for tests and benchmarks)
        self.storage_error: StorageError | None = None  # the first failed write, if any
        self._in_flight: set[asyncio.Task[CallResult]] = set()
        self._finished: deque[asyncio.Task[CallResult]] = deque()  # ended, not yet delivered
        self._wake = asyncio.Event()
        self._ready: deque[Call] = deque()  # dependencies met, waiting for room
        self._parked: dict[str, list[Call]] = defaultdict(list)  # missing id -> calls
        self._done: set[Planner] = set()

    async def run(self) -> RunSummary:
        """Run until no planner has anything more; return the summary."""
        start = time.monotonic()
        for planner in self.planners:
            planner.start(self.ctx)
        try:
            while True:
                self._fill()
                if self._in_flight:
                    await self._wake.wait()
                    self._wake.clear()
                    while self._finished:
                        task = self._finished.popleft()
                        self._in_flight.discard(task)
                        try:
                            result = task.result()
                        except StorageError as exc:
                            self._storage_failed(exc)
                            continue
                        self._deliver(result)
                    continue
                for planner in self.planners:
                    planner.on_settled()
                self._fill()
                if not self._in_flight:
                    break
        finally:
            for task in self._in_flight:
                task.cancel()
        for planner in self.planners:
            planner.finish()
        summary = self.stats.summary(self.scheduler, time.monotonic() - start)
        summary.replaced_chars = self.scheduler.replaced_chars + self.writer.replaced_chars
        if self.storage_error is not None:
            summary.storage_error = str(self.storage_error)
        return summary

    def _storage_failed(self, exc: StorageError) -> None:
        """The log cannot take rows: nothing more can be kept, so stop at once."""
        if self.storage_error is None:
            self.storage_error = exc
            self.scheduler.abort()

    # -- taking calls ----------------------------------------------------------

    def _pull(self) -> Call | None:
        if self._ready:
            return self._ready.popleft()
        for planner in self.planners:
            if planner in self._done:
                continue
            got = planner.next_call()
            if isinstance(got, Call):
                return got
            if got is Idle.DONE:
                self._done.add(planner)
        return None

    def _fill(self) -> None:
        while len(self._in_flight) < self.window and not self._halted():
            call = self._pull()
            if call is None:
                return
            missing = [dep for dep in call.after if dep not in self.ctx.logged]
            if missing:
                self._parked[missing[0]].append(call)
                continue
            task = asyncio.get_running_loop().create_task(self._execute(call))
            task.add_done_callback(self._ended)
            self._in_flight.add(task)
            self.max_in_flight = max(self.max_in_flight, len(self._in_flight))

    def _halted(self) -> bool:
        """Whether the scheduler was stopped (a signal, unexpected errors, the log failing):
        no call taken now could run, so the planners are not asked for more (their
        calls stay pending). A budget stop is not one: each call it refuses is counted
        (`RunStats.unlogged`)."""
        stopped = bool(getattr(self.scheduler, "stopped", False))
        return stopped and not getattr(self.scheduler, "budget_exhausted", False)

    def _ended(self, task: asyncio.Task[CallResult]) -> None:
        self._finished.append(task)
        self._wake.set()

    def _deliver(self, result: CallResult) -> None:
        if result.status in ("ok", "invalid") and result.call.awaited:
            self.ctx.logged.add(result.call.id)
            self._ready.extend(self._parked.pop(result.call.id, []))
        for planner in self.planners:
            planner.on_result(result)

    # -- running one call ------------------------------------------------------

    async def _execute(self, call: Call) -> CallResult:
        if call.request is None:  # a record: rows only
            finished = call.finish((), self.run_id)
            await self._write(call.table, finished.rows)
            return CallResult(call, _status(finished.status), finished.rows, None)
        outcomes: list[CallOutcome] = []
        first = call.request()
        model = first.model  # the provider's model id, for the error summary
        request: GenerateRequest | None = first
        priority = call.priority
        logged = 0  # outcomes already counted by a checkpoint row
        batch = getattr(self.scheduler, "batch", None)  # a stand-in scheduler may have none
        served: list[str] = []  # custom ids of the outcomes (batch mode): logged once written
        while request is not None:
            if batch is not None and batch.batched(call.provider):  # as a line of a batch job
                custom_id = batch_custom_id(call.id, request)
                outcome = await self.scheduler.call(
                    call.provider, request, priority=priority, custom_id=custom_id
                )
                if outcome.final:
                    served.append(custom_id)
            else:
                outcome = await self.scheduler.call(call.provider, request, priority=priority)
            self.stats.retries += max(0, outcome.attempts - 1)
            self.stats.billed(outcome.usage)
            if not outcome.final:
                self.stats.unlogged(call.stage, outcome, call.provider, model)
                if outcomes and call.stopped is not None and len(outcomes) > logged:
                    # Results that arrived before the stop are kept, not paid again.
                    kept = call.stopped(outcomes, self.run_id).rows
                    await self._write(call.table, kept, batch, served)
                    return CallResult(call, "pending", kept, outcome)
                return CallResult(call, "pending", (), outcome)
            outcomes.append(outcome)
            request = call.follow(outcomes) if call.follow is not None and outcome.ok else None
            priority = Priority.FOLLOW_UP
            if request is not None and call.checkpoint is not None:
                row = call.checkpoint(outcomes, self.run_id)
                row.update(call_columns(outcomes[logged:]))
                await self._write(call.table, (row,), batch, served)
                logged = len(outcomes)
        finished = call.finish(outcomes, self.run_id)
        rows = finished.rows
        if logged:
            rows = tuple({**row, **call_columns(outcomes[logged:])} for row in rows)
        await self._write(call.table, rows, batch, served)
        self.stats.ended(call.stage, finished.status)
        if finished.status is CallStatus.FAILED:
            self.stats.failure(call.provider, model, outcomes[-1].error)
        return CallResult(call, _status(finished.status), rows, outcomes[-1])

    async def _write(
        self,
        table: str,
        rows: Sequence[dict[str, Any]],
        batch: Any = None,
        served: list[str] | None = None,
    ) -> None:
        """Write rows; with `served` (custom ids of batch results they hold), batch mode
        notes the rows first and learns when they are durable (their jobs get collected)."""
        noted = batch is not None and bool(served)
        if noted:
            await batch.logging(served, table, rows)
        if len(rows) == 1:
            await self.writer.write(table, rows[0])
        elif rows:
            await asyncio.gather(*(self.writer.write(table, row) for row in rows))
        if noted and served is not None:
            await batch.logged(served)
            served.clear()


def _status(status: CallStatus) -> ResultStatus:
    if status is CallStatus.OK:
        return "ok"
    if status is CallStatus.INVALID:
        return "invalid"
    return "failed"
