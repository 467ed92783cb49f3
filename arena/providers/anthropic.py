"""Anthropic messages through the official SDK.

The SDK (2.x) speaks API version 2026-10-21, which has no sampling
parameters: a model's `temperature` is not sent to Anthropic. A model's
`reasoning_effort` becomes `output_config.effort`; its `extra` mapping is
merged into the request body (the SDK's `extra_body`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import anthropic
from anthropic.types import MessageParam

from arena.config import ModelConfig, ProviderConfig
from arena.providers._remote import RemoteProvider, lower_headers
from arena.providers._settings import with_model_settings
from arena.types import GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = [
    "AnthropicProvider",
    "PERMANENT_EMPTY",
]

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
        messages: list[MessageParam] = []
        for m in request.messages:
            if m.role == "assistant":
                messages.append({"role": "assistant", "content": m.content})
            else:
                messages.append({"role": "user", "content": m.content})
        create = self.client().messages.with_raw_response.create
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
        usage = message.usage
        prompt = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        billed = Usage(input_tokens=prompt, output_tokens=usage.output_tokens)
        if not text.strip():
            error = self.empty_error(message.stop_reason, permanent_reasons=PERMANENT_EMPTY)
            error.usage = billed
            raise error
        return GenerateResult(
            text=text,
            usage=billed,
            rate_headers=lower_headers(headers),
        )

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
