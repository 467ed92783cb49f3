"""OpenAI chat completions, and OpenAI-compatible servers (vLLM, Ollama, llama.cpp).

Against OpenAI itself (no `base_url`, or one on api.openai.com) the request
limits the answer with `max_completion_tokens`, what OpenAI's current models
accept; against any other server it sends `max_tokens`, which every
compatible server understands. A model's `reasoning_effort` is sent as
`reasoning_effort`, its `extra` mapping as the SDK's `extra_body` (fields
merged into the request body, e.g. vLLM's `top_k`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from arena.config import ModelConfig, ProviderConfig
from arena.providers._remote import RemoteProvider, lower_headers
from arena.providers._settings import with_model_settings
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "OpenAIProvider",
    "PERMANENT_EMPTY",
    "QUOTA_CODES",
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
        messages: list[ChatCompletionMessageParam] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for m in request.messages:
            if m.role == "assistant":
                messages.append({"role": "assistant", "content": m.content})
            else:
                messages.append({"role": "user", "content": m.content})
        create = self.client().chat.completions.with_raw_response.create
        try:
            raw = await create(**self._params(request, messages))
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
        if request.extra:
            # Server-specific fields (vLLM's top_k, chat_template_kwargs, ...) sent as given.
            params["extra_body"] = dict(request.extra)
        return params

    def _result(self, completion: Any, headers: Iterable[tuple[str, str]]) -> GenerateResult:
        if not getattr(completion, "choices", None):
            raise self.fail(ErrorKind.TRANSIENT, "malformed response: no choices")
        choice = completion.choices[0]
        text = choice.message.content or ""
        usage = completion.usage
        billed = Usage(
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
        )
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
