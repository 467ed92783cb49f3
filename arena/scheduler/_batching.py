"""Batch mode: a run's calls to a provider go out as batch jobs, crash-safe.

`BatchDispatcher` collects the requests the scheduler routes to a provider in
batch mode, per model, into jobs of at most `max_requests` (or what arrived
within `max_wait` seconds), and answers each request with its `BatchResult`
once its job ends. The protocol that makes a kill -9 at any moment harmless:

1. before a job is submitted, an intent row (intent id, provider, model, the
   custom ids, tags, time) is durable in the `batch_jobs` table;
2. the job goes out tagged with the intent id (`arena_intent`), then a row
   with the provider's job id is logged;
3. the runner logs a result's rows between `logging` (a `batch_logged` row
   names the request and the rows) and `logged` (they are durable). An
   intent is marked collected when its job ended and every request it
   executed is logged; after a kill -9, a `batch_logged` row counts only when
   the rows it names are in the log;
4. a later run reads the intents not yet collected and adopts their jobs,
   whatever its batch setting and whatever the provider entry is called now
   (the intent holds a digest of the API type, endpoint and key: `account`):
   by the logged job id, else by listing jobs carrying the intent's tags
   (OpenAI, Gemini), else (Anthropic keeps no tags) by listing jobs made since
   the intent and matching the custom ids of their results. An intent with no
   job found is void: the provider never accepted it.

Requests of adopted jobs are answered from those jobs and never submitted
again; requests not executed (cancelled, expired) stay pending. A run that
stops for any reason (budget, `--limit`, a signal, the log failing, kill -9)
leaves every intent with a result not yet logged open: the next run adopts it
again and logs the rest from the job.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

import polars as pl

from arena.providers._batch import BatchClient, BatchJob, BatchResult, JobState, job_tags
from arena.scheduler._batch_table import (
    BATCH_LOGGED_TABLE,
    BATCH_TABLE,
    OPEN_STATES,
    jobs_in_flight,
)
from arena.store import TABLES, RunLog
from arena.types import ErrorKind, GenerateRequest, ProviderError

__all__ = [
    "BATCH_TABLE",
    "BatchDispatcher",
    "BatchSettings",
    "batch_custom_id",
    "jobs_in_flight",
]


log = logging.getLogger(__name__)

# Seconds before an intent's time a job may carry (clock skew with the provider).
_SKEW = 120.0
# Failures in a row (network, rate limits) after which a job is no longer polled
# in this run: its requests stay pending and the next run adopts it.
_POLL_FAILURES = 5

_T = TypeVar("_T")
_F = TypeVar("_F")


@dataclass(frozen=True)
class BatchSettings:
    """A provider's batch mode: job size, how long to gather requests, poll interval."""

    max_requests: int = 10_000
    max_wait: float = 1.0
    poll_seconds: float = 30.0


class _Writer(Protocol):
    async def write(self, table: str, row: dict[str, Any]) -> None: ...


def batch_custom_id(call_id: str, request: GenerateRequest) -> str:
    """A request's custom id: its call id and a digest of the request (same request, same id)."""
    blob = json.dumps(
        [
            request.model,
            [(m.role, m.content) for m in request.messages],
            request.system,
            request.temperature,
            request.max_tokens,
            request.reasoning_effort,
        ],
        default=str,
    ).encode()
    return f"{call_id}-{hashlib.sha256(blob).hexdigest()[:10]}"[:64]


def _prompt_order(request: GenerateRequest) -> tuple[str, ...]:
    """A sort key that puts requests sharing a prompt prefix next to each other."""
    return (request.system or "", *(m.content for m in request.messages))


@dataclass(eq=False)
class _Intent:
    id: str
    provider: str
    model: str
    custom_ids: list[str]
    tags: dict[str, str]
    created_at: float
    job_id: str | None = None
    account: str = ""
    logged: set[str] = field(default_factory=set)  # requests whose result is logged
    executed: set[str] | None = None  # requests its job executed (None: not ended yet)
    closed: bool = False  # collected or void logged

    @property
    def collectable(self) -> bool:
        """Whether its job ended and every request it executed has its result logged."""
        return self.executed is not None and self.executed <= self.logged


class BatchDispatcher:
    """Gathers a run's batch-mode requests into jobs, adopts earlier runs' jobs, polls them.

    `clients` are the batch clients of every provider that has a batch API;
    `submitting` (default: all) those in batch mode, whose requests go out as
    jobs. The others only answer requests of jobs an earlier run left open.
    """

    def __init__(
        self,
        clients: Mapping[str, BatchClient],
        settings: Mapping[str, BatchSettings],
        writer: _Writer,
        log: RunLog,
        *,
        tournament: str,
        run_id: str,
        submitting: Collection[str] | None = None,
    ) -> None:
        self.clients = dict(clients)
        self.settings = dict(settings)
        self.submitting = frozenset(self.clients if submitting is None else submitting)
        self.writer = writer
        self.log = log
        self.tournament = tournament
        self.run_id = run_id
        self.jobs_submitted = 0
        self.jobs_adopted = 0
        self._results: dict[str, BatchResult] = {}  # custom id -> result not yet asked for
        self._served: dict[str, BatchResult] = {}  # custom id -> result handed out, not logged
        self._owner: dict[str, _Intent] = {}  # custom id -> the intent of its job
        self._waiting: dict[str, asyncio.Future[BatchResult | None]] = {}
        self._queues: dict[tuple[str, str], list[tuple[str, GenerateRequest]]] = defaultdict(list)
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._adoption: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._open = self._open_intents()
        # Requests to route here: batch mode's, and any that an open job may answer.
        self._routes = set(self.clients) if self._open else set(self.submitting)

    @property
    def open_jobs(self) -> int:
        """Jobs of earlier runs not yet collected (adopted by this run's first request)."""
        return len(self._open)

    def batched(self, provider: str) -> bool:
        """Whether requests to `provider` come here (batch mode, or earlier runs' open jobs)."""
        return provider in self._routes

    def submits(self, provider: str) -> bool:
        """Whether `provider` is in batch mode: its requests go out as jobs."""
        return provider in self.submitting

    async def holds(self, custom_id: str) -> bool:
        """Whether a job (of this run or an adopted one) answers the request."""
        await self._adopt()
        return custom_id in self._served or custom_id in self._results or custom_id in self._waiting

    async def request(
        self, provider: str, custom_id: str, request: GenerateRequest
    ) -> BatchResult | None:
        """The request's result from a job (None: not executed, it stays pending)."""
        await self._adopt()
        known = self._served.get(custom_id) or self._results.pop(custom_id, None)
        if known is not None:
            self._served[custom_id] = known  # kept until logged: asked again, not paid again
            return known
        waiting = self._waiting.get(custom_id)
        if waiting is None:
            if provider not in self.submitting:
                raise RuntimeError(
                    f"provider {provider} is not in batch mode and no job holds {custom_id}"
                )
            waiting = asyncio.get_running_loop().create_future()
            self._waiting[custom_id] = waiting
            self._enqueue(provider, custom_id, request)
        try:
            got = await asyncio.shield(waiting)
        finally:
            if waiting.done():
                self._waiting.pop(custom_id, None)
        if got is not None:
            self._served[custom_id] = got
        return got

    async def logging(
        self, custom_ids: Sequence[str], table: str, rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """Before the rows of these results are written: a `batch_logged` row for each that
        a job answered, naming `table` and the rows' ids (a later run checks they landed)."""
        names = json.dumps([str(row.get("id")) for row in rows])
        for cid in custom_ids:
            intent = self._owner.get(cid)
            if cid not in self._served or intent is None or cid in intent.logged:
                continue
            await self.writer.write(
                BATCH_LOGGED_TABLE,
                {
                    "id": cid,
                    "intent": intent.id,
                    "run_id": self.run_id,
                    "table": table,
                    "rows": names,
                    "logged_at": time.time(),
                },
            )

    async def logged(self, custom_ids: Iterable[str]) -> None:
        """The rows of these results are durable: a job whose executed requests are all
        logged is marked collected."""
        done: list[_Intent] = []
        for cid in custom_ids:
            if self._served.pop(cid, None) is None:
                continue  # not a job's result (a direct call)
            intent = self._owner.get(cid)
            if intent is None or cid in intent.logged:
                continue
            intent.logged.add(cid)
            done.append(intent)
        for intent in done:
            await self._collect(intent)

    async def close(self) -> None:
        """End the run: cancel timers and polls. Jobs with results not logged stay open."""
        for handle in self._timers.values():
            handle.cancel()
        tasks = [*self._tasks, *([self._adoption] if self._adoption is not None else [])]
        for task in tasks:
            task.cancel()

    async def _collect(self, intent: _Intent) -> None:
        """Mark the intent collected once its job ended and its executed results are logged."""
        if intent.closed or not intent.collectable:
            return
        intent.closed = True
        await self._log(intent, "collected", time.time())

    # -- submitting --------------------------------------------------------

    def _enqueue(self, provider: str, custom_id: str, request: GenerateRequest) -> None:
        key = (provider, request.model)
        queue = self._queues[key]
        queue.append((custom_id, request))
        settings = self._settings(provider)
        most = min(settings.max_requests, self.clients[provider].max_requests)
        if len(queue) >= most:
            self._flush(key)
        elif key not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(settings.max_wait, self._flush, key)

    def _settings(self, provider: str) -> BatchSettings:
        return self.settings.get(provider) or BatchSettings()

    def _flush(self, key: tuple[str, str]) -> None:
        handle = self._timers.pop(key, None)
        if handle is not None:
            handle.cancel()
        requests = self._queues.pop(key, [])
        if requests:
            # Prompts sharing a prefix side by side: the provider works through a job's
            # lines over minutes or hours, and a cached prefix lives about 5 minutes.
            requests.sort(key=lambda item: _prompt_order(item[1]))
            self._spawn(self._submit(key[0], key[1], requests))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _submit(
        self, provider: str, model: str, requests: list[tuple[str, GenerateRequest]]
    ) -> None:
        ids = [cid for cid, _ in requests]
        intent_id = uuid.uuid4().hex[:16]
        tags = job_tags(self.tournament, self.run_id, ids, arena_intent=intent_id)
        client = self.clients[provider]
        intent = _Intent(intent_id, provider, model, ids, tags, time.time(), account=client.account)
        try:
            # Durable before the provider sees it.
            await self._log(intent, "intent", intent.created_at)
            job = await client.submit(requests, tags)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the job was refused: its requests fail, nothing billed
            self._fail(ids, exc)
            return
        intent.job_id = job.id
        self.jobs_submitted += 1
        for cid in ids:
            self._owner[cid] = intent
        await self._watch(provider, job, intent, "submitted")

    def _fail(self, ids: Iterable[str], exc: Exception) -> None:
        error = (
            exc
            if isinstance(exc, ProviderError)
            else ProviderError(
                ErrorKind.PERMANENT, f"batch job not accepted: {type(exc).__name__}: {exc}"
            )
        )
        for cid in ids:
            self._resolve(cid, BatchResult(cid, error=error))

    async def _watch(self, provider: str, job: BatchJob, intent: _Intent, state: str) -> None:
        """Log the job's row, follow it to its end; a failure leaves its requests pending."""
        try:
            await self._log(intent, state, time.time())
            await self._follow(provider, job, intent)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the job is the provider's: a later run adopts it
            log.warning(
                "provider %s: batch job %s could not be followed (%s: %s): its requests stay "
                "pending and the next run adopts it",
                provider,
                job.id,
                type(exc).__name__,
                exc,
            )
            self._drop(intent)

    def _drop(self, intent: _Intent) -> None:
        """The intent's requests get no result in this run: pending, never sent again by it."""
        for cid in intent.custom_ids:
            if self._owner.get(cid, intent) is not intent:
                continue
            waiting = self._waiting.get(cid)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)

    async def _follow(self, provider: str, job: BatchJob, intent: _Intent) -> None:
        """Poll the job until it ends; hand every request its result; collect the intent."""
        client = self.clients[provider]
        poll = self._settings(provider).poll_seconds
        while not job.state.final:
            await asyncio.sleep(poll)
            job = await self._patiently(provider, partial(client.get, job.id))
        results: list[BatchResult] = []
        if job.state is not JobState.FAILED:
            results = await self._patiently(provider, partial(client.results, job))
        ids = set(intent.custom_ids)
        seen: set[str] = set()
        for result in results:
            if result.custom_id not in ids:
                continue
            seen.add(result.custom_id)
            self._resolve(result.custom_id, result)
        for cid in ids - seen:
            if self._owner.get(cid, intent) is not intent:
                continue  # not run by this job: a later job of this run or an adopted one has it
            if job.state is JobState.FAILED:
                self._fail([cid], RuntimeError(job.error or "the job was refused"))
            else:
                self._resolve(cid, BatchResult(cid, executed=False))
        intent.executed = {r.custom_id for r in results if r.executed and r.custom_id in ids}
        await self._collect(intent)

    async def _patiently(self, provider: str, call: Callable[[], Awaitable[_T]]) -> _T:
        """A read of a job, retried over network failures and rate limits (a few times)."""
        poll = self._settings(provider).poll_seconds
        for attempt in range(1, _POLL_FAILURES + 1):
            try:
                return await call()
            except ProviderError as exc:
                if attempt == _POLL_FAILURES or exc.kind not in (
                    ErrorKind.TRANSIENT,
                    ErrorKind.RATE_LIMIT,
                ):
                    raise
                await asyncio.sleep(max(poll, exc.retry_after or 0.0))
        raise AssertionError("unreachable")

    def _resolve(self, custom_id: str, result: BatchResult) -> None:
        waiting = self._waiting.get(custom_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(result if result.executed else None)
        elif result.executed:
            self._results[custom_id] = result

    # -- adopting earlier runs' jobs ---------------------------------------

    async def _adopt(self) -> None:
        if not self._open:
            return
        if self._adoption is None:
            self._adoption = asyncio.get_running_loop().create_task(self._adopt_jobs())
        await asyncio.shield(self._adoption)

    def _open_intents(self) -> list[_Intent]:
        """The intents of earlier runs not yet collected, with their requests already logged."""
        df = self.log.read(BATCH_TABLE)
        if not df.height:
            return []
        rows = df.filter(df["state"].is_in(OPEN_STATES)).sort("created_at")
        if not rows.height:
            return []
        wanted = {cid for ids in rows["custom_ids"] for cid in json.loads(ids)}
        logged = self._verified_logged(wanted)
        out = []
        for row in rows.iter_rows(named=True):
            ids = json.loads(row["custom_ids"])
            out.append(
                _Intent(
                    row["id"],
                    row["provider"],
                    row["model"],
                    ids,
                    json.loads(row["tags"]),
                    row["created_at"],
                    row["job_id"],
                    row["account"] or "",
                    logged=logged.intersection(ids),
                )
            )
        return out

    def _verified_logged(self, wanted: set[str]) -> set[str]:
        """Of these requests, those with a `batch_logged` row whose rows are in the log."""
        entries = self.log.read(BATCH_LOGGED_TABLE).filter(
            pl.col("id").is_in(list(wanted)) & pl.col("table").is_in(list(TABLES))
        )
        out: set[str] = set()
        for (table,), group in entries.group_by("table"):
            assert isinstance(table, str)
            by_run = any(c.name == "run_id" for c in TABLES[table].columns)
            present = self.log.read(table, columns=["id", "run_id"] if by_run else ["id"])
            keys: set[tuple[str, str | None]] = set(
                zip(
                    present["id"].to_list(),
                    present["run_id"].to_list() if by_run else [None] * present.height,
                    strict=True,
                )
            )
            for cid, rows, run_id in group.select("id", "rows", "run_id").iter_rows():
                if all((r, run_id if by_run else None) in keys for r in json.loads(rows)):
                    out.add(cid)
        return out

    def _adopter(self, intent: _Intent) -> str | None:
        """The provider of this run that can read the intent's job (None: none can).

        Same endpoint and key (its `account`) whatever the entry is called now;
        an intent logged before accounts were kept goes to the entry of its name.
        """
        if not intent.account:
            return intent.provider if intent.provider in self.clients else None
        same = sorted(name for name, c in self.clients.items() if c.account == intent.account)
        if intent.provider in same:
            return intent.provider
        return same[0] if same else None

    async def _adopt_jobs(self) -> None:
        by_provider: dict[str, list[_Intent]] = defaultdict(list)
        lost: list[_Intent] = []
        for intent in self._open:
            pending = set(intent.custom_ids) - intent.logged
            if intent.job_id is not None and not pending:  # every result logged already
                intent.executed = set()
                await self._collect(intent)
                continue
            provider = self._adopter(intent)
            if provider is None:
                lost.append(intent)
            else:
                by_provider[provider].append(intent)
        if lost:
            log.warning(
                "%d batch job(s) of earlier runs (%d requests) belong to an endpoint or key "
                "that no provider of this run has (providers: %s): their requests go out "
                "again (and are paid again) unless that provider is restored",
                len(lost),
                sum(len(i.custom_ids) for i in lost),
                ", ".join(sorted({i.provider for i in lost})),
            )
        await asyncio.gather(*(self._adopt_of(p, found) for p, found in by_provider.items()))

    async def _adopt_of(self, provider: str, intents: list[_Intent]) -> None:
        client = self.clients[provider]
        untagged = [i for i in intents if i.job_id is None and not client.tags_listed]
        listed: list[BatchJob] | None = []
        if untagged:
            since = min(i.created_at for i in untagged) - _SKEW
            listed = await self._held(untagged, lambda: client.list_jobs(since=since), None)
        adopted = 0
        for intent in intents:
            if listed is None and intent in untagged:
                continue  # the jobs could not be listed: held pending in this run
            job = await self._held(
                [intent], partial(self._find, provider, intent, listed or []), False
            )
            if job is False:
                continue  # could not look: held pending in this run
            if job is None:  # the provider never accepted it: its requests are free
                intent.closed = True
                await self._log(intent, "void", time.time())
                continue
            if isinstance(job, ProviderError):  # the job is gone: its results with it
                log.warning(
                    "provider %s: batch job %s of an earlier run is no longer there (%s): "
                    "its %d requests not logged go out again",
                    provider,
                    intent.job_id,
                    job,
                    len(set(intent.custom_ids) - intent.logged),
                )
                intent.closed = True
                await self._log(intent, "gone", time.time())
                continue
            assert isinstance(job, BatchJob)
            intent.provider, intent.job_id, intent.account = provider, job.id, client.account
            adopted += 1
            self.jobs_adopted += 1
            loop = asyncio.get_running_loop()
            for cid in set(intent.custom_ids) - intent.logged:
                self._owner[cid] = intent  # a later intent of the same request wins
                self._waiting.setdefault(cid, loop.create_future())
            self._spawn(self._watch(provider, job, intent, "submitted"))
        if adopted and provider not in self.submitting:
            log.warning(
                "provider %s: %d open batch job(s) of an earlier run adopted although batch "
                "mode is off: their requests are answered from them (not paid again); "
                "its other calls go out directly",
                provider,
                adopted,
            )

    async def _held(
        self, intents: list[_Intent], look: Callable[[], Awaitable[_T]], failed: _F
    ) -> _T | _F:
        """`look()`, or `failed` when the provider cannot be asked now: then the intents'
        requests are held pending in this run (never sent again while their job may run)."""
        try:
            return await look()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            loop = asyncio.get_running_loop()
            for intent in intents:
                for cid in set(intent.custom_ids) - intent.logged:
                    held = self._waiting.setdefault(cid, loop.create_future())
                    if not held.done():
                        held.set_result(None)
            log.warning(
                "provider %s: open batch job(s) of an earlier run could not be looked up "
                "(%s: %s): their requests stay pending until a later run finds them",
                intents[0].provider,
                type(exc).__name__,
                exc,
            )
            return failed

    async def _find(
        self, provider: str, intent: _Intent, listed: list[BatchJob]
    ) -> BatchJob | ProviderError | None:
        """The intent's job: by its id, its tags, or (untagged) the custom ids of its results
        (a ProviderError: the API no longer knows the job id)."""
        client = self.clients[provider]
        if intent.job_id is not None:
            try:
                return await client.get(intent.job_id)
            except ProviderError as exc:
                if exc.status == 404:  # deleted, or past the API's retention
                    return exc
                raise
        if client.tags_listed:
            found = await client.list_jobs(tags={"arena_intent": intent.id})
            return found[0] if found else None
        return await self._match(provider, intent, listed)

    async def _match(
        self, provider: str, intent: _Intent, listed: list[BatchJob]
    ) -> BatchJob | None:
        """The untagged job holding exactly the intent's custom ids (waits for it to end)."""
        client = self.clients[provider]
        ids = set(intent.custom_ids)
        poll = self._settings(provider).poll_seconds
        for job in listed:
            if job.created_at < intent.created_at - _SKEW:
                continue
            if job.total is not None and job.total != len(ids):
                continue
            while not job.state.final:
                await asyncio.sleep(poll)
                job = await client.get(job.id)
            results = await client.results(job)
            if results and {r.custom_id for r in results} <= ids:
                return job
        return None

    async def _log(self, intent: _Intent, state: str, when: float) -> None:
        await self.writer.write(
            BATCH_TABLE,
            {
                "id": intent.id,
                "provider": intent.provider,
                "model": intent.model,
                "state": state,
                "job_id": intent.job_id,
                "custom_ids": json.dumps(intent.custom_ids),
                "tags": json.dumps(intent.tags, sort_keys=True),
                "created_at": intent.created_at,
                "updated_at": when,
                "run_id": self.run_id,
                "account": intent.account,
            },
        )
