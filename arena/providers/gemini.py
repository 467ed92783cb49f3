"""Gemini through the `google-genai` SDK (`client.aio.models.generate_content`).

Not `google-generativeai`, whose support ended on 2025-11-30. The SDK's own
retries (and its implicit reconnect on dropped connections) are turned off
with a one-attempt retry policy, so every attempt goes through the governor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from arena.config import ModelConfig, ProviderConfig
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
    "GeminiProvider",
    "PERMANENT_EMPTY",
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
            if request.extra
            else None,
        )
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
        meta = response.usage_metadata
        if not text.strip():
            finish = _name(candidate.finish_reason) if candidate.finish_reason else None
            error = self.empty_error(finish, permanent_reasons=PERMANENT_EMPTY)
            error.usage = Usage(
                input_tokens=(meta.prompt_token_count or 0) if meta else 0,
                output_tokens=(
                    (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
                )
                if meta
                else 0,
            )
            raise error
        usage = Usage(
            input_tokens=(meta.prompt_token_count or 0) if meta else 0,
            # Thinking tokens are billed as output.
            output_tokens=((meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0))
            if meta
            else 0,
        )
        http = response.sdk_http_response
        return GenerateResult(
            text=text, usage=usage, rate_headers=lower_headers(http.headers if http else None)
        )

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
