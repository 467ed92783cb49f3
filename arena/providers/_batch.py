"""Provider batch APIs: submit a job of requests, find it again, poll it, collect results.

A `BatchClient` speaks one provider's batch API (OpenAI files + batches,
Anthropic message batches, Gemini batch mode) through the provider's own SDK
client, key and error classification. It never sleeps or retries: whoever
drives it (a stage whose calls go out as successive batches) decides when to
poll. The API is shaped for crash-safe use:

- `submit(requests, tags)`: every request carries a custom id (arena's call
  id), the job carries `tags` (tournament and run ids, a digest of the
  request ids: `job_tags`) where the API keeps them.
- `list_jobs(tags=..., since=...)`: jobs of this key, newest first; with
  `tags`, only those carrying them. An API that keeps no tags (Anthropic)
  lists every job since `since` with empty tags (`tags_listed` False): a job
  found that way is matched by the custom ids of its results.
- `get(job_id)`, `cancel(job_id)`: the job's state now.
- `results(job)`: one `BatchResult` per request with a result: ok, failed
  (status and error, as a direct call's), or not executed (cancelled or
  expired: not billed, to be sent again).
- `account`: a digest of the API's type, endpoint and key (`account_digest`):
  a later run finds the jobs of an earlier one by it, whatever the provider
  entry is called then; the key cannot be read back from it.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Protocol

from arena.config import ProviderConfig
from arena.types import GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "BatchClient",
    "BatchJob",
    "BatchResult",
    "JobState",
    "account_digest",
    "provider_account",
    "job_tags",
    "requests_digest",
]


class JobState(StrEnum):
    """A batch job's state, the same for every API."""

    RUNNING = "running"  # validating, queued or in progress
    CANCELLING = "cancelling"
    ENDED = "ended"  # every request has a result
    CANCELLED = "cancelled"  # ended by a cancel: requests not run have none
    EXPIRED = "expired"  # ended by the API's deadline: requests not run have none
    FAILED = "failed"  # the job was refused as a whole (bad input file)

    @property
    def final(self) -> bool:
        """Whether the job will not change any more (its results can be read)."""
        return self not in (JobState.RUNNING, JobState.CANCELLING)


@dataclass(frozen=True)
class BatchJob:
    """A batch job as the API reports it."""

    id: str
    state: JobState
    provider_state: str  # the API's own word for it
    created_at: float  # epoch seconds
    tags: Mapping[str, str] = field(default_factory=dict)
    total: int | None = None  # requests in the job (None: the API does not say)
    done: int | None = None  # requests with a result so far
    error: str | None = None  # why a FAILED job was refused


@dataclass(frozen=True)
class BatchResult:
    """One request's outcome in a job."""

    custom_id: str
    result: GenerateResult | None = None
    error: ProviderError | None = None
    executed: bool = True  # False: cancelled or expired before it ran (not billed)

    @property
    def ok(self) -> bool:
        """Whether the request has an answer."""
        return self.result is not None

    @property
    def usage(self) -> Usage:
        """The tokens billed for it (an unusable answer's too)."""
        if self.result is not None:
            return self.result.usage
        if self.error is not None and self.error.usage is not None:
            return self.error.usage
        return Usage(0, 0)


def requests_digest(custom_ids: Iterable[str]) -> str:
    """A short digest of a job's request ids (the same set, the same digest)."""
    blob = "\n".join(sorted(custom_ids)).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def job_tags(
    tournament: str, run_id: str, custom_ids: Iterable[str], **more: str
) -> dict[str, str]:
    """The tags arena puts on a job: tournament, run and the digest of its request ids."""
    return {
        "arena_tournament": tournament,
        "arena_run": run_id,
        "arena_requests": requests_digest(custom_ids),
        **more,
    }


def account_digest(api_type: str, base_url: str | None, key: str | None) -> str:
    """Who owns a job: a digest of the API type, the endpoint and the key ("": no key).

    A job can only be read with the key that made it, on the endpoint that
    took it: two provider entries with the same digest see the same jobs.
    A one-way hash of a key (too long to guess) does not reveal the key.
    """
    if not key:
        return ""
    blob = "\0".join(("arena-batch-account", api_type, (base_url or "").rstrip("/"), key))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class _Keyed(Protocol):
    """An SDK provider as `provider_account` sees it."""

    config: ProviderConfig

    def api_key(self) -> str: ...


def provider_account(provider: _Keyed) -> str:
    """The `account_digest` of an SDK provider: its type, base_url and key."""
    try:
        key: str | None = provider.api_key()
    except ProviderError:  # no key: its jobs cannot be read anyway
        key = None
    return account_digest(provider.config.type, provider.config.base_url, key)


class BatchClient(ABC):
    """One provider's batch API. Subclasses translate; they never wait or retry."""

    # Whether listed jobs carry the tags they were submitted with.
    tags_listed: ClassVar[bool] = True
    # Most requests one job may hold.
    max_requests: ClassVar[int]
    # The owner of this client's jobs (`account_digest`; "": unknown, matched by name).
    account: str = ""

    @abstractmethod
    async def submit(
        self, requests: Sequence[tuple[str, GenerateRequest]], tags: Mapping[str, str]
    ) -> BatchJob:
        """Submit (custom id, request) pairs of one model as one job."""

    @abstractmethod
    async def get(self, job_id: str) -> BatchJob:
        """The job's state now."""

    @abstractmethod
    async def list_jobs(
        self, *, tags: Mapping[str, str] | None = None, since: float | None = None
    ) -> list[BatchJob]:
        """Jobs of this key, newest first: carrying `tags`, created at or after `since`."""

    @abstractmethod
    async def cancel(self, job_id: str) -> BatchJob:
        """Ask the API to cancel the job; requests already done keep their results."""

    @abstractmethod
    async def results(self, job: BatchJob) -> list[BatchResult]:
        """The results of a job in a final state, one per request that has one."""

    @staticmethod
    def check_requests(requests: Sequence[tuple[str, GenerateRequest]], most: int) -> str:
        """The one model of `requests` (ValueError: none, too many, mixed models, repeated ids)."""
        if not requests:
            raise ValueError("a batch job needs at least one request")
        if len(requests) > most:
            raise ValueError(f"a batch job holds at most {most} requests, got {len(requests)}")
        models = {r.model for _, r in requests}
        if len(models) != 1:
            raise ValueError(f"a batch job holds requests of one model, got {sorted(models)}")
        ids = [custom_id for custom_id, _ in requests]
        if len(set(ids)) != len(ids):
            raise ValueError("the custom ids of a batch job must be unique")
        return models.pop()


def matches(job_tags: Mapping[str, str], wanted: Mapping[str, str] | None) -> bool:
    """Whether a job carries every wanted tag."""
    return wanted is None or all(job_tags.get(k) == v for k, v in wanted.items())
