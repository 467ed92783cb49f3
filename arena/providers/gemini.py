"""Gemini through the `google-genai` SDK (`client.aio.models.generate_content`).

Not `google-generativeai`, whose support ended on 2025-11-30. The SDK's own
retries (and its implicit reconnect on dropped connections) are turned off
with a one-attempt retry policy, so every attempt goes through the governor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from arena.config import ModelConfig, ProviderConfig
from arena.providers._batch import (
    BatchClient,
    BatchJob,
    BatchResult,
    JobState,
    matches,
    provider_account,
)
from arena.providers._remote import (
    RemoteProvider,
    google_error_details,
    google_error_reasons,
    lower_headers,
    retry_delay_from_google_body,
)
from arena.providers._settings import with_model_settings
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "AUTH_REASONS",
    "GeminiBatchClient",
    "GeminiProvider",
    "PERMANENT_EMPTY",
    "gemini_usage",
    "name_tags",
    "tags_name",
]

try:  # the transports the SDK may use; either may be absent
    import aiohttp

    _AIOHTTP_ERRORS: tuple[type[BaseException], ...] = (aiohttp.ClientError,)
except ImportError:  # pragma: no cover
    _AIOHTTP_ERRORS = ()
try:
    import httpx2

    _HTTPX_TIMEOUTS: tuple[type[BaseException], ...] = (httpx2.TimeoutException,)
    _HTTPX_ERRORS: tuple[type[BaseException], ...] = (httpx2.TransportError,)
except ImportError:  # pragma: no cover
    _HTTPX_TIMEOUTS = _HTTPX_ERRORS = ()

_TIMEOUTS: tuple[type[BaseException], ...] = (TimeoutError, *_HTTPX_TIMEOUTS)
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    *_AIOHTTP_ERRORS,
    *_HTTPX_ERRORS,
)

# Finish reasons after which an empty answer would be empty again.
PERMANENT_EMPTY = (
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "LANGUAGE",
    "IMAGE_SAFETY",
)
# Error reasons that mean the key is wrong (Gemini answers those with HTTP 400).
AUTH_REASONS = frozenset(
    {"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED"}
)


class GeminiProvider(RemoteProvider):
    """`type: gemini`: `google.genai.Client` (Gemini Developer API) with retries off."""

    default_key_env = "GEMINI_API_KEY"
    label = "Gemini"

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        super().__init__(name, config, models, seed)
        self._client: genai.Client | None = None

    def client(self) -> genai.Client:
        """The SDK client, built on first use."""
        if self._client is None:
            options = gtypes.HttpOptions(
                base_url=self.config.base_url,
                timeout=max(1, round(self.config.timeout * 1000)),
                retry_options=gtypes.HttpRetryOptions(attempts=1),
            )
            self._client = genai.Client(
                api_key=self.api_key(), vertexai=False, http_options=options
            )
        return self._client

    async def close(self) -> None:
        """Close the HTTP sessions."""
        if self._client is not None:
            await self._client.aio.aclose()
            self._client = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        """One generateContent call."""
        request = with_model_settings(request, self.models)
        contents, config = _contents_and_config(request)
        try:
            response = await self.client().aio.models.generate_content(
                model=request.model, contents=contents, config=config
            )
        except genai_errors.APIError as exc:
            raise self._status_error(exc) from None
        except _TIMEOUTS:
            raise self.timeout_error() from None
        except _CONNECTION_ERRORS as exc:
            raise self.connection_error(exc) from None
        except ValueError as exc:  # JSON that does not decode or validate
            raise self.malformed_error(exc) from None
        try:
            return self._result(response)
        except (AttributeError, TypeError, IndexError) as exc:
            raise self.malformed_error(exc) from None

    def _result(self, response: gtypes.GenerateContentResponse) -> GenerateResult:
        candidates = response.candidates or []
        if not candidates:
            feedback = response.prompt_feedback
            reason = feedback.block_reason if feedback is not None else None
            if reason is not None:
                raise self.fail(
                    ErrorKind.PERMANENT, f"prompt blocked ({_name(reason)})", status=200
                )
            raise self.fail(ErrorKind.TRANSIENT, "malformed response: no candidates")
        candidate = candidates[0]
        parts = candidate.content.parts if candidate.content is not None else None
        text = "".join(p.text for p in parts or [] if p.text and not p.thought)
        usage = gemini_usage(response.usage_metadata)
        if not text.strip():
            finish = _name(candidate.finish_reason) if candidate.finish_reason else None
            error = self.empty_error(finish, permanent_reasons=PERMANENT_EMPTY)
            error.usage = usage
            raise error
        http = response.sdk_http_response
        return GenerateResult(
            text=text, usage=usage, rate_headers=lower_headers(http.headers if http else None)
        )

    def batch_client(self) -> GeminiBatchClient:
        """This provider's batch mode client (inlined requests)."""
        return GeminiBatchClient(self)

    def inlined_request(self, custom_id: str, request: GenerateRequest) -> gtypes.InlinedRequest:
        """One request of a batch job, its custom id as the `key` metadata."""
        request = with_model_settings(request, self.models)
        contents, config = _contents_and_config(request, batch=True)
        return gtypes.InlinedRequest(
            model=request.model, contents=contents, config=config, metadata={"key": custom_id}
        )

    def response_result(self, response: gtypes.GenerateContentResponse) -> GenerateResult:
        """A batch response as a result (ProviderError when unusable)."""
        try:
            return self._result(response)
        except (AttributeError, TypeError, IndexError) as exc:
            raise self.malformed_error(exc) from None

    def sdk_error(self, exc: BaseException) -> ProviderError:
        """An SDK exception as a classified ProviderError (key-free)."""
        if isinstance(exc, genai_errors.APIError):
            return self._status_error(exc)
        if isinstance(exc, _TIMEOUTS):
            return self.timeout_error()
        if isinstance(exc, _CONNECTION_ERRORS):
            return self.connection_error(exc)
        return self.malformed_error(exc)

    def _status_error(self, exc: genai_errors.APIError) -> ProviderError:
        status = int(exc.code) if exc.code else 500
        body: Any = exc.details
        message = exc.message or exc.status or f"HTTP {status}"
        reasons = google_error_reasons(body)
        if status == 429:
            return self.status_error(
                status,
                str(message),
                quota=_daily_quota(body),
                retry_after=retry_delay_from_google_body(body),
            )
        return self.status_error(status, str(message), auth=bool(reasons & AUTH_REASONS))


def _contents_and_config(
    request: GenerateRequest, *, batch: bool = False
) -> tuple[list[gtypes.Content], gtypes.GenerateContentConfig]:
    """The SDK's contents and config of a request. A batch request carries no
    `extra` fields (the SDK sends them only with a direct call)."""
    contents = [
        gtypes.Content(
            role="model" if m.role == "assistant" else "user",
            parts=[gtypes.Part(text=m.content)],
        )
        for m in request.messages
    ]
    config = gtypes.GenerateContentConfig(
        temperature=request.temperature,
        max_output_tokens=request.max_tokens,
        system_instruction=request.system or None,
        thinking_config=(
            gtypes.ThinkingConfig(
                thinking_level=gtypes.ThinkingLevel(request.reasoning_effort.upper())
            )
            if request.reasoning_effort is not None
            else None
        ),
        # REST fields merged into the body, e.g. {"generationConfig": {"topK": 20}}.
        http_options=gtypes.HttpOptions(extra_body=dict(request.extra))
        if request.extra and not batch
        else None,
    )
    return contents, config


_GEMINI_STATES = {
    "JOB_STATE_PENDING": JobState.RUNNING,
    "JOB_STATE_QUEUED": JobState.RUNNING,
    "JOB_STATE_RUNNING": JobState.RUNNING,
    "JOB_STATE_CANCELLING": JobState.CANCELLING,
    "JOB_STATE_SUCCEEDED": JobState.ENDED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": JobState.ENDED,
    "JOB_STATE_CANCELLED": JobState.CANCELLED,
    "JOB_STATE_EXPIRED": JobState.EXPIRED,
    "JOB_STATE_FAILED": JobState.FAILED,
}
_BATCH_ERRORS: tuple[type[BaseException], ...] = (
    genai_errors.APIError,
    ValueError,
    *_TIMEOUTS,
    *_CONNECTION_ERRORS,
)
# A job's tags live in its display name: "arena key=value;key=value" (URL-quoted).
_TAG_PREFIX = "arena "
# Status codes of inlined errors for requests that never ran (cancelled, expired).
_NOT_EXECUTED = frozenset({499, 504})


def tags_name(tags: Mapping[str, str]) -> str:
    """The display name that carries `tags`."""
    return _TAG_PREFIX + ";".join(f"{quote(k)}={quote(v)}" for k, v in sorted(tags.items()))


def name_tags(name: str | None) -> dict[str, str]:
    """The tags a display name carries ({} when it carries none)."""
    if not name or not name.startswith(_TAG_PREFIX):
        return {}
    tags: dict[str, str] = {}
    for pair in name[len(_TAG_PREFIX) :].split(";"):
        key, sep, value = pair.partition("=")
        if sep:
            tags[unquote(key)] = unquote(value)
    return tags


class GeminiBatchClient(BatchClient):
    """Gemini batch mode with inlined requests; tags ride in the job's display name."""

    max_requests = 10_000

    def __init__(self, provider: GeminiProvider) -> None:
        self.provider = provider
        self.account = provider_account(provider)

    async def submit(
        self, requests: Sequence[tuple[str, GenerateRequest]], tags: Mapping[str, str]
    ) -> BatchJob:
        """Create the job from inlined requests."""
        model = self.check_requests(requests, self.max_requests)
        src = [self.provider.inlined_request(cid, r) for cid, r in requests]
        config = gtypes.CreateBatchJobConfig(display_name=tags_name(tags))
        try:
            job = await self.provider.client().aio.batches.create(
                model=model, src=src, config=config
            )
        except _BATCH_ERRORS as exc:
            raise self.provider.sdk_error(exc) from None
        return _gemini_job(job)

    async def get(self, job_id: str) -> BatchJob:
        """The job now."""
        return _gemini_job(await self._get(job_id))

    async def _get(self, job_id: str) -> gtypes.BatchJob:
        try:
            return await self.provider.client().aio.batches.get(name=job_id)
        except _BATCH_ERRORS as exc:
            raise self.provider.sdk_error(exc) from None

    async def list_jobs(
        self, *, tags: Mapping[str, str] | None = None, since: float | None = None
    ) -> list[BatchJob]:
        """Jobs newest first, those whose display name carries `tags`, since `since`."""
        found: list[BatchJob] = []
        try:
            pager = await self.provider.client().aio.batches.list(
                config=gtypes.ListBatchJobsConfig(page_size=100)
            )
            async for raw in pager:
                job = _gemini_job(raw)
                if since is not None and job.created_at < since:
                    continue
                if matches(job.tags, tags):
                    found.append(job)
        except _BATCH_ERRORS as exc:
            raise self.provider.sdk_error(exc) from None
        return sorted(found, key=lambda j: j.created_at, reverse=True)

    async def cancel(self, job_id: str) -> BatchJob:
        """Cancel the job."""
        try:
            await self.provider.client().aio.batches.cancel(name=job_id)
        except _BATCH_ERRORS as exc:
            raise self.provider.sdk_error(exc) from None
        return await self.get(job_id)

    async def results(self, job: BatchJob) -> list[BatchResult]:
        """The inlined responses, matched to their requests by the `key` metadata."""
        raw = await self._get(job.id)
        responses = raw.dest.inlined_responses if raw.dest is not None else None
        out: list[BatchResult] = []
        for item in responses or []:
            custom_id = (item.metadata or {}).get("key", "")
            if item.error is not None or item.response is None:
                code = item.error.code if item.error is not None and item.error.code else 500
                message = (item.error.message if item.error is not None else None) or "no response"
                if code in _NOT_EXECUTED:
                    failure = self.provider.fail(ErrorKind.TRANSIENT, message, status=code)
                    out.append(BatchResult(custom_id, error=failure, executed=False))
                else:
                    out.append(
                        BatchResult(custom_id, error=self.provider.status_error(code, message))
                    )
                continue
            try:
                out.append(
                    BatchResult(custom_id, result=self.provider.response_result(item.response))
                )
            except ProviderError as exc:
                out.append(BatchResult(custom_id, error=exc))
        return out


def _gemini_job(job: gtypes.BatchJob) -> BatchJob:
    state = _name(job.state) if job.state is not None else "JOB_STATE_PENDING"
    created = job.create_time.timestamp() if job.create_time is not None else 0.0
    responses = job.dest.inlined_responses if job.dest is not None else None
    return BatchJob(
        id=job.name or "",
        state=_GEMINI_STATES.get(state, JobState.RUNNING),
        provider_state=state,
        created_at=created,
        tags=name_tags(job.display_name),
        total=len(responses) if responses is not None else None,
        done=sum(1 for r in responses if r.response is not None) if responses else None,
        error=job.error.message if job.error is not None else None,
    )


def gemini_usage(meta: gtypes.GenerateContentResponseUsageMetadata | None) -> Usage:
    """A response's usage: thinking tokens are billed as output; cached content
    tokens are part of the prompt count (implicit or explicit caching)."""
    if meta is None:
        return Usage(0, 0)
    thoughts = meta.thoughts_token_count
    return Usage(
        input_tokens=meta.prompt_token_count or 0,
        output_tokens=(meta.candidates_token_count or 0) + (thoughts or 0),
        cache_read_tokens=meta.cached_content_token_count,
        reasoning_tokens=thoughts,
    )


def _daily_quota(body: Any) -> bool:
    """Whether a RESOURCE_EXHAUSTED names a per-day quota (waiting minutes won't help)."""
    for detail in google_error_details(body):
        if str(detail.get("@type", "")).endswith("google.rpc.QuotaFailure"):
            for violation in detail.get("violations") or []:
                if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                    return True
    return False


def _name(value: Any) -> str:
    """An SDK enum's name, or the string itself."""
    return str(getattr(value, "value", value))
