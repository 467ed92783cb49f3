"""Batch mode: a run's calls to a provider go out as batch jobs, crash-safe.

`BatchDispatcher` collects the requests the scheduler routes to a provider in
batch mode, per model, into jobs of at most `max_requests` (or what arrived
within `max_wait` seconds), and answers each request with its `BatchResult`
once its job ends. The protocol that makes a kill -9 at any moment harmless:

1. before a job is submitted, an intent row (intent id, provider, model, the
   custom ids, tags, time) is durable in the `batch_jobs` table;
2. the job goes out tagged with the intent id (`arena_intent`), then a row
   with the provider's job id is logged;
3. a later run reads the intents not yet marked collected and adopts their
   jobs: by the logged job id, else by listing jobs carrying the intent's
   tags (OpenAI, Gemini), else (Anthropic keeps no tags) by listing jobs made
   since the intent and matching the custom ids of their results. An intent
   with no job found is void: the provider never accepted it.

Requests of adopted jobs are answered from those jobs and never submitted
again; requests not executed (cancelled, expired) stay pending. Intents are
marked collected only when the run ends, after every result's rows were
logged; until then a resumed run adopts them again and reuses their results.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from arena.providers._batch import BatchClient, BatchJob, BatchResult, JobState, job_tags
from arena.scheduler._batch_table import BATCH_TABLE, jobs_in_flight
from arena.store import RunLog
from arena.types import ErrorKind, GenerateRequest, ProviderError

__all__ = [
    "BATCH_TABLE",
    "BatchDispatcher",
    "BatchSettings",
    "batch_custom_id",
    "jobs_in_flight",
]


# Seconds before an intent's time a job may carry (clock skew with the provider).
_SKEW = 120.0


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


@dataclass
class _Intent:
    id: str
    provider: str
    model: str
    custom_ids: list[str]
    tags: dict[str, str]
    created_at: float
    job_id: str | None = None


class BatchDispatcher:
    """Gathers a run's batch-mode requests into jobs, adopts earlier runs' jobs, polls them."""

    def __init__(
        self,
        clients: Mapping[str, BatchClient],
        settings: Mapping[str, BatchSettings],
        writer: _Writer,
        log: RunLog,
        *,
        tournament: str,
        run_id: str,
    ) -> None:
        self.clients = dict(clients)
        self.settings = dict(settings)
        self.writer = writer
        self.log = log
        self.tournament = tournament
        self.run_id = run_id
        self.jobs_submitted = 0
        self.jobs_adopted = 0
        self._results: dict[str, BatchResult] = {}  # custom id -> result not yet asked for
        self._waiting: dict[str, asyncio.Future[BatchResult | None]] = {}
        self._queues: dict[tuple[str, str], list[tuple[str, GenerateRequest]]] = defaultdict(list)
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._adopted: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._intents: list[_Intent] = []  # this run's and adopted ones, to mark collected

    def batched(self, provider: str) -> bool:
        """Whether `provider` is in batch mode."""
        return provider in self.clients

    async def request(
        self, provider: str, custom_id: str, request: GenerateRequest
    ) -> BatchResult | None:
        """The request's result from a job (None: not executed, it stays pending)."""
        await self._adopt(provider)
        known = self._results.pop(custom_id, None)
        if known is not None and known.executed:
            return known
        waiting = self._waiting.get(custom_id)
        if waiting is None:
            waiting = asyncio.get_running_loop().create_future()
            self._waiting[custom_id] = waiting
            self._enqueue(provider, custom_id, request)
        try:
            return await asyncio.shield(waiting)
        finally:
            if waiting.done():
                self._waiting.pop(custom_id, None)

    async def close(self, *, completed: bool) -> None:
        """End the run: cancel timers and polls; mark fully collected intents (when `completed`)."""
        for handle in self._timers.values():
            handle.cancel()
        for task in [*self._tasks, *self._adopted.values()]:
            task.cancel()
        if not completed:
            return
        now = time.time()
        for intent in self._intents:
            if intent.job_id is None or any(
                c in self._waiting and not self._waiting[c].done() for c in intent.custom_ids
            ):
                continue  # a result not in yet: a later run adopts the job again
            await self._log(intent, "collected", now)

    # -- submitting --------------------------------------------------------

    def _enqueue(self, provider: str, custom_id: str, request: GenerateRequest) -> None:
        key = (provider, request.model)
        queue = self._queues[key]
        queue.append((custom_id, request))
        settings = self.settings[provider]
        most = min(settings.max_requests, self.clients[provider].max_requests)
        if len(queue) >= most:
            self._flush(key)
        elif key not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_later(settings.max_wait, self._flush, key)

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
        intent = _Intent(intent_id, provider, model, ids, tags, time.time())
        try:
            await self._log(
                intent, "intent", intent.created_at
            )  # durable before the provider sees it
            job = await self.clients[provider].submit(requests, tags)
            intent.job_id = job.id
            self.jobs_submitted += 1
            self._intents.append(intent)
            await self._log(intent, "submitted", time.time())
            await self._follow(provider, job, set(ids))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the job was refused: its requests fail, nothing billed
            self._fail(ids, exc)

    def _fail(self, ids: list[str], exc: Exception) -> None:
        error = (
            exc
            if isinstance(exc, ProviderError)
            else ProviderError(
                ErrorKind.PERMANENT, f"batch job not accepted: {type(exc).__name__}: {exc}"
            )
        )
        for cid in ids:
            self._resolve(cid, BatchResult(cid, error=error))

    async def _follow(self, provider: str, job: BatchJob, ids: set[str]) -> None:
        """Poll the job until it ends; hand every request its result."""
        client = self.clients[provider]
        poll = self.settings[provider].poll_seconds
        while not job.state.final:
            await asyncio.sleep(poll)
            job = await client.get(job.id)
        results = await client.results(job) if job.state is not JobState.FAILED else []
        seen: set[str] = set()
        for result in results:
            seen.add(result.custom_id)
            self._resolve(result.custom_id, result)
        for cid in ids - seen:
            if job.state is JobState.FAILED:
                self._fail([cid], RuntimeError(job.error or "the job was refused"))
            else:
                self._resolve(cid, BatchResult(cid, executed=False))

    def _resolve(self, custom_id: str, result: BatchResult) -> None:
        waiting = self._waiting.get(custom_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(result if result.executed else None)
        elif result.executed:
            self._results[custom_id] = result

    # -- adopting an earlier run's jobs ------------------------------------

    async def _adopt(self, provider: str) -> None:
        task = self._adopted.get(provider)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._adopt_jobs(provider))
            self._adopted[provider] = task
        await asyncio.shield(task)

    def _open_intents(self, provider: str) -> list[_Intent]:
        df = self.log.read(BATCH_TABLE)
        out = []
        for row in df.iter_rows(named=True):
            if row["provider"] != provider or row["state"] in ("collected", "void"):
                continue
            out.append(
                _Intent(
                    row["id"],
                    row["provider"],
                    row["model"],
                    json.loads(row["custom_ids"]),
                    json.loads(row["tags"]),
                    row["created_at"],
                    row["job_id"],
                )
            )
        return out

    async def _adopt_jobs(self, provider: str) -> None:
        client = self.clients[provider]
        intents = self._open_intents(provider)
        if not intents:
            return
        untagged = [i for i in intents if i.job_id is None and not client.tags_listed]
        listed: list[BatchJob] = []
        if untagged:
            since = min(i.created_at for i in untagged) - _SKEW
            listed = await client.list_jobs(since=since)
        for intent in intents:
            ids = set(intent.custom_ids)
            for cid in ids:  # requests of this run asking for them wait on the adopted job
                self._waiting.setdefault(cid, asyncio.get_running_loop().create_future())
            job: BatchJob | None = None
            if intent.job_id is not None:
                job = await client.get(intent.job_id)
            elif client.tags_listed:
                found = await client.list_jobs(tags={"arena_intent": intent.id})
                job = found[0] if found else None
            else:
                job = await self._match(client, intent, listed)
            if job is None:  # the provider never accepted it: its requests are free
                await self._log(intent, "void", time.time())
                for cid in ids:
                    fut = self._waiting.pop(cid, None)
                    if fut is not None and not fut.done():
                        fut.cancel()
                continue
            intent.job_id = job.id
            self.jobs_adopted += 1
            self._intents.append(intent)
            await self._log(intent, "submitted", time.time())
            self._spawn(self._follow(provider, job, ids))

    async def _match(
        self, client: BatchClient, intent: _Intent, listed: list[BatchJob]
    ) -> BatchJob | None:
        """The untagged job holding exactly the intent's custom ids (waits for it to end)."""
        ids = set(intent.custom_ids)
        poll = self.settings[intent.provider].poll_seconds
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
            },
        )
