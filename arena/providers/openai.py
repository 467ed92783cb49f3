"""OpenAI chat completions, and OpenAI-compatible servers (vLLM, Ollama, llama.cpp).

Against OpenAI itself (no `base_url`, or one on api.openai.com) the request
limits the answer with `max_completion_tokens`, what OpenAI's current models
accept; against any other server it sends `max_tokens`, which every
compatible server understands. A model's `reasoning_effort` is sent as
`reasoning_effort`, its `extra` mapping as the SDK's `extra_body` (fields
merged into the request body, e.g. vLLM's `top_k`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from arena.config import ModelConfig, ProviderConfig
from arena.providers._batch import (
    BatchClient,
    BatchJob,
    BatchResult,
    JobState,
    matches,
    provider_account,
)
from arena.providers._remote import RemoteProvider, lower_headers
from arena.providers._settings import with_model_settings
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "OpenAIBatchClient",
    "OpenAIProvider",
    "PERMANENT_EMPTY",
    "QUOTA_CODES",
    "openai_usage",
]

# 429 codes that mean "no money or quota left", not "slow down".
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
# Finish reasons after which an empty answer would be empty again.
PERMANENT_EMPTY = ("length", "content_filter")


class OpenAIProvider(RemoteProvider):
    """`type: openai`: `openai.AsyncOpenAI` with the SDK's retries off."""

    default_key_env = "OPENAI_API_KEY"
    label = "OpenAI"

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        super().__init__(name, config, models, seed)
        self._client: openai.AsyncOpenAI | None = None
        url = config.base_url
        self._official = url is None or urlsplit(url).hostname == "api.openai.com"

    def client(self) -> openai.AsyncOpenAI:
        """The SDK client, built on first use."""
        if self._client is None:
            self._client = openai.AsyncOpenAI(
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
        """One chat completion."""
        request = with_model_settings(request, self.models)
        create = self.client().chat.completions.with_raw_response.create
        try:
            raw = await create(**self._params(request, _messages(request)))
            completion: ChatCompletion = raw.parse()
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except openai.APITimeoutError:
            raise self.timeout_error() from None
        except openai.APIConnectionError as exc:
            raise self.connection_error(exc) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise self.malformed_error(exc) from None
        try:
            return self._result(completion, raw.headers.items())
        except (AttributeError, TypeError, IndexError) as exc:
            raise self.malformed_error(exc) from None

    def _params(
        self, request: GenerateRequest, messages: list[ChatCompletionMessageParam]
    ) -> dict[str, Any]:
        """The SDK's keyword arguments: the model's reasoning effort and `extra` included."""
        params: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "temperature": request.temperature,
        }
        # OpenAI's current models take max_completion_tokens; other servers know max_tokens.
        params["max_completion_tokens" if self._official else "max_tokens"] = request.max_tokens
        if request.reasoning_effort is not None:
            params["reasoning_effort"] = request.reasoning_effort
        if request.cache_key is not None:
            # Routes requests that share a prompt prefix to the same cache.
            params["prompt_cache_key"] = request.cache_key
        if request.extra:
            # Server-specific fields (vLLM's top_k, chat_template_kwargs, ...) sent as given.
            params["extra_body"] = dict(request.extra)
        return params

    def _result(self, completion: Any, headers: Iterable[tuple[str, str]]) -> GenerateResult:
        if not getattr(completion, "choices", None):
            raise self.fail(ErrorKind.TRANSIENT, "malformed response: no choices")
        choice = completion.choices[0]
        text = choice.message.content or ""
        billed = openai_usage(completion.usage)
        if not text.strip():
            refusal = getattr(choice.message, "refusal", None)
            if refusal:
                error = self.fail(ErrorKind.PERMANENT, f"the model refused: {refusal}", status=200)
            else:
                error = self.empty_error(choice.finish_reason, permanent_reasons=PERMANENT_EMPTY)
            error.usage = billed
            raise error
        return GenerateResult(
            text=text,
            usage=billed,
            rate_headers=lower_headers(headers),
        )

    def batch_client(self) -> OpenAIBatchClient:
        """This provider's Batch API client (files + batches)."""
        return OpenAIBatchClient(self)

    def line_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The request body of one chat completion (a batch line's `body`)."""
        request = with_model_settings(request, self.models)
        params = self._params(request, _messages(request))
        extra = params.pop("extra_body", None) or {}
        return {**params, **extra}

    def completion_result(self, body: Any) -> GenerateResult:
        """A chat completion's JSON body as a result (ProviderError when unusable)."""
        try:
            completion = ChatCompletion.model_validate(body)
            return self._result(completion, ())
        except (ValueError, AttributeError, TypeError, IndexError) as exc:
            raise self.malformed_error(exc) from None

    def sdk_error(self, exc: Exception) -> ProviderError:
        """An SDK exception as a classified ProviderError (key-free)."""
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc)
        if isinstance(exc, openai.APITimeoutError):
            return self.timeout_error()
        if isinstance(exc, openai.APIConnectionError):
            return self.connection_error(exc)
        return self.malformed_error(exc)

    def _status_error(self, exc: openai.APIStatusError) -> ProviderError:
        body = exc.body if isinstance(exc.body, dict) else {}
        message = body.get("message") if isinstance(body.get("message"), str) else None
        code = exc.code or (body.get("type") if isinstance(body.get("type"), str) else None)
        return self.status_error(
            exc.status_code,
            message or str(exc.message),
            exc.response.headers,
            quota=exc.status_code == 429 and code in QUOTA_CODES,
        )


def openai_usage(usage: Any) -> Usage:
    """A chat completion's usage (an SDK object or its JSON dict): cached prompt
    tokens from `prompt_tokens_details`, reasoning tokens from
    `completion_tokens_details` (None where the server does not report them)."""
    if usage is None:
        return Usage(0, 0)
    prompt = _field(usage, "prompt_tokens_details")
    completion = _field(usage, "completion_tokens_details")
    return Usage(
        input_tokens=_field(usage, "prompt_tokens") or 0,
        output_tokens=_field(usage, "completion_tokens") or 0,
        cache_read_tokens=_field(prompt, "cached_tokens"),
        reasoning_tokens=_field(completion, "reasoning_tokens"),
    )


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _messages(request: GenerateRequest) -> list[ChatCompletionMessageParam]:
    messages: list[ChatCompletionMessageParam] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for m in request.messages:
        if m.role == "assistant":
            messages.append({"role": "assistant", "content": m.content})
        else:
            messages.append({"role": "user", "content": m.content})
    return messages


_OPENAI_STATES = {
    "validating": JobState.RUNNING,
    "in_progress": JobState.RUNNING,
    "finalizing": JobState.RUNNING,
    "cancelling": JobState.CANCELLING,
    "completed": JobState.ENDED,
    "cancelled": JobState.CANCELLED,
    "expired": JobState.EXPIRED,
    "failed": JobState.FAILED,
}
# Error codes of lines that never ran (not billed; send them again).
_NOT_EXECUTED = frozenset({"batch_expired", "batch_cancelled"})


class OpenAIBatchClient(BatchClient):
    """The OpenAI Batch API: a JSONL file of chat completions, a batch with `metadata` tags."""

    max_requests = 50_000

    def __init__(self, provider: OpenAIProvider) -> None:
        self.provider = provider
        self.account = provider_account(provider)

    async def submit(
        self, requests: Sequence[tuple[str, GenerateRequest]], tags: Mapping[str, str]
    ) -> BatchJob:
        """Upload the requests as a file, then create the batch with `tags` as its metadata."""
        self.check_requests(requests, self.max_requests)
        lines = [
            json.dumps(
                {
                    "custom_id": custom_id,
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": self.provider.line_body(request),
                }
            )
            for custom_id, request in requests
        ]
        data = ("\n".join(lines) + "\n").encode()
        client = self.provider.client()
        try:
            upload = await client.files.create(
                file=("arena-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            batch = await client.batches.create(
                input_file_id=upload.id,
                endpoint="/v1/chat/completions",
                completion_window="24h",
                metadata=dict(tags),
            )
        except (openai.OpenAIError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        return _openai_job(batch)

    async def get(self, job_id: str) -> BatchJob:
        """The batch now."""
        try:
            return _openai_job(await self.provider.client().batches.retrieve(job_id))
        except (openai.OpenAIError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None

    async def list_jobs(
        self, *, tags: Mapping[str, str] | None = None, since: float | None = None
    ) -> list[BatchJob]:
        """Batches newest first, those with `tags` in their metadata, created since `since`."""
        found: list[BatchJob] = []
        try:
            async for batch in self.provider.client().batches.list(limit=100):
                job = _openai_job(batch)
                if since is not None and job.created_at < since:
                    break  # newest first: the rest are older
                if matches(job.tags, tags):
                    found.append(job)
        except (openai.OpenAIError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        return found

    async def cancel(self, job_id: str) -> BatchJob:
        """Cancel the batch."""
        try:
            return _openai_job(await self.provider.client().batches.cancel(job_id))
        except (openai.OpenAIError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None

    async def results(self, job: BatchJob) -> list[BatchResult]:
        """Lines of the output and error files."""
        client = self.provider.client()
        try:
            batch = await client.batches.retrieve(job.id)
            texts = [
                (await client.files.content(file_id)).text
                for file_id in (batch.output_file_id, batch.error_file_id)
                if file_id
            ]
        except (openai.OpenAIError, ValueError) as exc:
            raise self.provider.sdk_error(exc) from None
        out: list[BatchResult] = []
        for text in texts:
            for raw in text.splitlines():
                if raw.strip():
                    out.append(self._line(json.loads(raw)))
        return out

    def _line(self, line: dict[str, Any]) -> BatchResult:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or None
        error = line.get("error") or None
        if response is None:
            code = str((error or {}).get("code") or "batch_error")
            message = str((error or {}).get("message") or code)
            failure = self.provider.fail(ErrorKind.TRANSIENT, f"{code}: {message}")
            return BatchResult(custom_id, error=failure, executed=code not in _NOT_EXECUTED)
        status = int(response.get("status_code") or 500)
        body = response.get("body")
        if status != 200:
            detail = body.get("error") if isinstance(body, dict) else None
            said = detail.get("message") if isinstance(detail, dict) else None
            said_code = detail.get("code") if isinstance(detail, dict) else None
            failure = self.provider.status_error(
                status, str(said or f"HTTP {status}"), quota=said_code in QUOTA_CODES
            )
            return BatchResult(custom_id, error=failure)
        try:
            return BatchResult(custom_id, result=self.provider.completion_result(body))
        except ProviderError as exc:
            return BatchResult(custom_id, error=exc)


def _openai_job(batch: Any) -> BatchJob:
    counts = batch.request_counts
    return BatchJob(
        id=batch.id,
        state=_OPENAI_STATES.get(batch.status, JobState.RUNNING),
        provider_state=str(batch.status),
        created_at=float(batch.created_at),
        tags=dict(batch.metadata or {}),
        total=counts.total if counts else None,
        done=(counts.completed + counts.failed) if counts else None,
        error="; ".join(e.message or "" for e in (batch.errors.data or []))
        if batch.errors is not None and batch.errors.data
        else None,
    )
