"""Anthropic messages through the official SDK.

The SDK (2.x) speaks API version 2026-10-21, which has no sampling
parameters: a model's `temperature` is not sent to Anthropic. A model's
`reasoning_effort` becomes `output_config.effort`; its `extra` mapping is
merged into the request body (the SDK's `extra_body`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anthropic
from anthropic.types import MessageParam

from arena.config import ModelConfig, ProviderConfig
from arena.providers._batch import (
    BatchClient,
    BatchJob,
    BatchResult,
    JobState,
    provider_account,
)
from arena.providers._remote import RemoteProvider, lower_headers
from arena.providers._settings import with_model_settings
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "AnthropicBatchClient",
    "AnthropicProvider",
    "MAX_CACHE_BREAKPOINTS",
    "PERMANENT_EMPTY",
    "anthropic_usage",
    "message_params",
]

# The API accepts at most four cache_control breakpoints per request.
MAX_CACHE_BREAKPOINTS = 4

# Stop reasons after which an empty answer would be empty again.
PERMANENT_EMPTY = ("max_tokens", "refusal", "model_context_window_exceeded")


class AnthropicProvider(RemoteProvider):
    """`type: anthropic`: `anthropic.AsyncAnthropic` with the SDK's retries off."""

    default_key_env = "ANTHROPIC_API_KEY"
    label = "Anthropic"

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        super().__init__(name, config, models, seed)
        self._client: anthropic.AsyncAnthropic | None = None

    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, built on first use."""
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self.api_key(),
                base_url=self.config.base_url,
                timeout=self.config.timeout,
                max_retries=0,
            )
        return self._client

    async def close(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        """One message."""
        request = with_model_settings(request, self.models)
        create = self.client().messages.with_raw_response.create
        params = message_params(request)
        try:
            raw = await create(**params)
            message = await raw.parse()
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from None
        except anthropic.APITimeoutError:
            raise self.timeout_error() from None
        except anthropic.APIConnectionError as exc:
            raise self.connection_error(exc) from None
        except (anthropic.APIResponseValidationError, ValueError) as exc:
            raise self.malformed_error(exc) from None
        try:
            return self._result(message, raw.headers.items())
        except (AttributeError, TypeError) as exc:
            raise self.malformed_error(exc) from None

    def _result(self, message: Any, headers: Iterable[tuple[str, str]]) -> GenerateResult:
        text = "".join(
            block.text for block in message.content or [] if getattr(block, "type", "") == "text"
        )
        billed = anthropic_usage(message.usage)
        if not text.strip():
            error = self.empty_error(message.stop_reason, permanent_reasons=PERMANENT_EMPTY)
            error.usage = billed
            raise error
        return GenerateResult(
            text=text,
            usage=billed,
            rate_headers=lower_headers(headers),
        )

    def batch_client(self) -> AnthropicBatchClient:
        """This provider's Message Batches client."""
        return AnthropicBatchClient(self)

    def line_params(self, request: GenerateRequest) -> dict[str, Any]:
        """The Messages API body of one request (a batch request's `params`)."""
        params = message_params(with_model_settings(request, self.models))
        extra = params.pop("extra_body", None) or {}
        return {**params, **extra}

    def message_result(self, message: Any) -> GenerateResult:
        """A batch's succeeded message as a result (ProviderError when unusable)."""
        try:
            return self._result(message, ())
        except (AttributeError, TypeError) as exc:
            raise self.malformed_error(exc) from None

    def sdk_error(self, exc: Exception) -> ProviderError:
        """An SDK exception as a classified ProviderError (key-free)."""
        if isinstance(exc, anthropic.APIStatusError):
            return self._status_error(exc)
        if isinstance(exc, anthropic.APITimeoutError):
            return self.timeout_error()
        if isinstance(exc, anthropic.APIConnectionError):
            return self.connection_error(exc)
        return self.malformed_error(exc)

    def _status_error(self, exc: anthropic.APIStatusError) -> ProviderError:
        message = exc.api_message or str(exc.message)
        kind = exc.type or ""
        return self.status_error(
            exc.status_code,
            message,
            exc.response.headers,
            quota=exc.status_code == 402 or kind == "billing_error",
        )


def _extra_body(request: GenerateRequest) -> dict[str, Any]:
    """Fields merged into the request body: the model's `extra`, and its effort as
    `output_config.effort` (sent through the body so that every 2.x SDK passes it)."""
    body = dict(request.extra)
    if request.reasoning_effort is not None:
        config = body.get("output_config")
        config = dict(config) if isinstance(config, dict) else {}
        config["effort"] = request.reasoning_effort
        body["output_config"] = config
    return body


def message_params(request: GenerateRequest) -> dict[str, Any]:
    """The Messages API parameters of a request (model settings already applied).

    A request with `cache_breaks` sends its last message as text blocks split
    at those offsets, each but the last block marked `cache_control`
    (ephemeral, the 5-minute cache); the text is unchanged. Without them the
    messages are plain strings, as always.
    """
    messages: list[MessageParam] = []
    last = len(request.messages) - 1
    for i, m in enumerate(request.messages):
        content: Any = m.content
        if i == last and request.cache_breaks:
            content = _cached_blocks(m.content, request)
        if m.role == "assistant":
            messages.append({"role": "assistant", "content": content})
        else:
            messages.append({"role": "user", "content": content})
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if request.system:
        params["system"] = request.system
    body = _extra_body(request)
    if body:
        params["extra_body"] = body
    return params


def _cached_blocks(text: str, request: GenerateRequest) -> list[dict[str, Any]]:
    """`text` as text blocks ending at the cache breaks (the last few, at most four)."""
    cuts = sorted({c for c in request.cache_breaks if 0 < c < len(text)})
    cuts = cuts[-MAX_CACHE_BREAKPOINTS:]
    blocks: list[dict[str, Any]] = []
    start = 0
    for cut in cuts:
        blocks.append(
            {"type": "text", "text": text[start:cut], "cache_control": {"type": "ephemeral"}}
        )
        start = cut
    blocks.append({"type": "text", "text": text[start:]})
    return blocks


def anthropic_usage(usage: Any) -> Usage:
    """A message's usage (an SDK object or its JSON dict): the prompt counts cache
    reads and writes, which the API reports apart from `input_tokens`."""
    if usage is None:
        return Usage(0, 0)

    def get(name: str) -> Any:
        return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)

    read = get("cache_read_input_tokens")
    write = get("cache_creation_input_tokens")
    return Usage(
        input_tokens=(get("input_tokens") or 0) + (read or 0) + (write or 0),
        output_tokens=get("output_tokens") or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


# The HTTP status each error type of the API stands for.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatchClient(BatchClient):
    """Anthropic Message Batches. The API keeps no tags on a batch: `list_jobs`
    lists every batch since `since` (tags empty), matched by the custom ids of
    its results once it ended."""

    tags_listed = False
    max_requests = 100_000

    def __init__(self, provider: AnthropicProvider) -> None:
        self.provider = provider
        self.account = provider_account(provider)

    async def submit(
        self, requests: Sequence[tuple[str, GenerateRequest]], tags: Mapping[str, str]
    ) -> BatchJob:
        """Create the batch (`tags` are not kept by this API)."""
        self.check_requests(requests, self.max_requests)
        items: Any = [
            {"custom_id": custom_id, "params": self.provider.line_params(request)}
            for custom_id, request in requests
        ]
        try:
            batch = await self.provider.client().messages.batches.create(requests=items)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        return _anthropic_job(batch)

    async def get(self, job_id: str) -> BatchJob:
        """The batch now."""
        try:
            return _anthropic_job(await self.provider.client().messages.batches.retrieve(job_id))
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None

    async def list_jobs(
        self, *, tags: Mapping[str, str] | None = None, since: float | None = None
    ) -> list[BatchJob]:
        """Batches newest first, created since `since`; `tags` cannot be checked here."""
        found: list[BatchJob] = []
        try:
            async for batch in self.provider.client().messages.batches.list(limit=100):
                job = _anthropic_job(batch)
                if since is not None and job.created_at < since:
                    break
                found.append(job)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        return found

    async def cancel(self, job_id: str) -> BatchJob:
        """Cancel the batch."""
        try:
            return _anthropic_job(await self.provider.client().messages.batches.cancel(job_id))
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None

    async def results(self, job: BatchJob) -> list[BatchResult]:
        """Every request's result (available once the batch ended)."""
        out: list[BatchResult] = []
        try:
            decoder = await self.provider.client().messages.batches.results(job.id)
            async for item in decoder:
                out.append(self._item(item))
        except (anthropic.AnthropicError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        return out

    def _item(self, item: Any) -> BatchResult:
        custom_id = str(item.custom_id)
        result = item.result
        kind = getattr(result, "type", "")
        if kind == "succeeded":
            try:
                return BatchResult(custom_id, result=self.provider.message_result(result.message))
            except ProviderError as exc:
                return BatchResult(custom_id, error=exc)
        if kind == "errored":
            inner = getattr(result.error, "error", None)
            error_type = str(getattr(inner, "type", "api_error"))
            message = str(getattr(inner, "message", "") or error_type)
            status = _ERROR_STATUS.get(error_type, 500)
            failure = self.provider.status_error(
                status, message, quota=error_type == "billing_error"
            )
            return BatchResult(custom_id, error=failure)
        reason = "canceled before it ran" if kind == "canceled" else "expired before it ran"
        failure = self.provider.fail(ErrorKind.TRANSIENT, f"batch request {reason}")
        return BatchResult(custom_id, error=failure, executed=False)


def _anthropic_job(batch: Any) -> BatchJob:
    counts = batch.request_counts
    ended = batch.processing_status == "ended"
    if not ended:
        state = JobState.CANCELLING if batch.processing_status == "canceling" else JobState.RUNNING
    elif counts.canceled:
        state = JobState.CANCELLED
    elif counts.expired:
        state = JobState.EXPIRED
    else:
        state = JobState.ENDED
    done = counts.succeeded + counts.errored + counts.canceled + counts.expired
    return BatchJob(
        id=batch.id,
        state=state,
        provider_state=str(batch.processing_status),
        created_at=batch.created_at.timestamp(),
        tags={},
        total=done + counts.processing,
        done=counts.succeeded + counts.errored,
    )
