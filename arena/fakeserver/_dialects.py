"""What each provider's API looks like on the wire: requests, answers, errors, headers.

A `Dialect` turns an HTTP request into a `GenerateRequest` and builds the
responses of one API (OpenAI chat completions, Anthropic messages, Gemini
generateContent) with that API's body shapes, status codes and headers.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from arena.fakeserver._cache import Segment
from arena.fakeserver._limits import LimitState
from arena.types import GenerateRequest, Message, Usage

DEFAULT_MAX_TOKENS = 4096

# Anthropic API versions from this one on reject sampling parameters.
ANTHROPIC_NO_SAMPLING_VERSION = "2026-10-21"


class BadRequest(Exception):
    """The request body is not what the API accepts (HTTP 400)."""


def _text_of(content: Any, where: str) -> str:
    """Text of a message content: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if not isinstance(part, dict) or not isinstance(part.get("text"), str):
                raise BadRequest(f"{where}: only text content is supported")
            texts.append(part["text"])
        return "".join(texts)
    raise BadRequest(f"{where}: content must be a string or a list of text parts")


def _int_field(body: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadRequest(f"{name}: must be a positive integer")
        return value
    return None


def _float_field(body: dict[str, Any], name: str, default: float) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise BadRequest(f"{name}: must be a number >= 0")
    return float(value)


def _go_duration(seconds: float) -> str:
    """A duration the way OpenAI's reset headers write it ("20ms", "1.5s", "2m3s")."""
    if seconds < 1.0:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60.0)
    if minutes >= 1:
        return f"{int(minutes)}m{rest:.0f}s"
    return f"{rest:.3g}s"


def _request_id() -> str:
    return uuid.uuid4().hex[:24]


class Dialect(ABC):
    """One provider API as the fake server speaks it."""

    name: str

    @abstractmethod
    def api_key(self, request: web.Request) -> str | None:
        """The key the client sent (None when it sent none)."""

    @abstractmethod
    def parse(self, request: web.Request, body: Any) -> tuple[str, GenerateRequest]:
        """The model id and the completion request; raise BadRequest."""

    @abstractmethod
    def success_body(self, model: str, text: str, usage: Usage, finished: bool) -> dict[str, Any]:
        """A successful answer (`finished` False: cut at max_tokens)."""

    @abstractmethod
    def error(
        self,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        reason: str | None = None,
    ) -> web.Response:
        """An error response with this API's body shape."""

    @abstractmethod
    def rate_limited(
        self, model: str, bucket: str, retry_after: float, state: LimitState | None
    ) -> web.Response:
        """A 429 with this API's retry hint."""

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The JSON body of an error (what a batch line's result holds)."""
        response = self.error(status, message)
        assert isinstance(response.body, bytes)
        body: dict[str, Any] = json.loads(response.body)
        return body

    def auth_error(self, status: int, has_key: bool, key: str = "") -> web.Response:
        """A wrong key (401, echoing its first and last characters) or one without permission."""
        if status == 403:
            return self.error(403, "This API key does not have permission to use this resource.")
        if not has_key:
            return self.error(401, "No API key provided.")
        shown = f": {key[:10]}...{key[-8:]}" if len(key) >= 24 else ""
        return self.error(401, f"Incorrect API key provided{shown}.")

    def rate_headers(self, state: LimitState) -> dict[str, str]:
        """Rate-limit headers sent with every answer (none by default)."""
        return {}

    def cache_segments(self, request: GenerateRequest, body: Any) -> list[Segment]:
        """The prompt as the prefix cache sees it: system text, then each message."""
        texts = [request.system or "", *(m.content for m in request.messages)]
        return [(t, False) for t in texts if t]

    # The body fields that report token usage (dropped by `omit_usage`).
    usage_fields: tuple[str, ...] = ()

    def success(
        self,
        model: str,
        text: str,
        usage: Usage,
        finished: bool,
        state: LimitState | None,
        *,
        omit_usage: bool = False,
    ) -> web.Response:
        """A successful answer with its headers (without usage fields when `omit_usage`)."""
        headers = self.rate_headers(state) if state is not None else {}
        body = self.success_body(model, text, usage, finished)
        if omit_usage:
            for name in self.usage_fields:
                body.pop(name, None)
        return web.json_response(body, headers=headers)


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return None


class OpenAIDialect(Dialect):
    """POST /v1/chat/completions."""

    name = "openai"
    usage_fields = ("usage",)

    def api_key(self, request: web.Request) -> str | None:
        return _bearer(request)

    def parse(self, request: web.Request, body: Any) -> tuple[str, GenerateRequest]:
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("model: required")
        if body.get("stream"):
            raise BadRequest("stream: not supported by the fake server")
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("messages: must be a non-empty list")
        system: list[str] = []
        messages: list[Message] = []
        for i, m in enumerate(raw):
            if not isinstance(m, dict):
                raise BadRequest(f"messages[{i}]: must be an object")
            role = m.get("role")
            text = _text_of(m.get("content"), f"messages[{i}].content")
            if role in ("system", "developer"):
                system.append(text)
            elif role in ("user", "assistant"):
                messages.append(Message(role, text))
            else:
                raise BadRequest(f"messages[{i}].role: unsupported role {role!r}")
        if not messages:
            raise BadRequest("messages: needs at least one user message")
        max_tokens = _int_field(body, "max_completion_tokens", "max_tokens")
        return model, GenerateRequest(
            model=model,
            messages=tuple(messages),
            temperature=_float_field(body, "temperature", 1.0),
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            system="\n".join(system) or None,
        )

    def success_body(self, model: str, text: str, usage: Usage, finished: bool) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{_request_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop" if finished else "length",
                }
            ],
            "usage": {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.total,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens or 0},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
            },
        }

    def error(
        self,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        reason: str | None = None,
    ) -> web.Response:
        kind, code = {
            400: ("invalid_request_error", None),
            401: ("invalid_request_error", "invalid_api_key"),
            403: ("invalid_request_error", "permission_denied"),
            404: ("invalid_request_error", "model_not_found"),
            429: ("requests", "rate_limit_exceeded"),
        }.get(status, ("server_error", None))
        body = {"error": {"message": message, "type": kind, "param": None, "code": reason or code}}
        out = {"x-request-id": f"req_{_request_id()}", **(headers or {})}
        return web.json_response(body, status=status, headers=out)

    def rate_headers(self, state: LimitState) -> dict[str, str]:
        headers: dict[str, str] = {}
        if state.limit_requests is not None and state.remaining_requests is not None:
            headers["x-ratelimit-limit-requests"] = f"{state.limit_requests:.0f}"
            headers["x-ratelimit-remaining-requests"] = f"{state.remaining_requests:.0f}"
            headers["x-ratelimit-reset-requests"] = _go_duration(state.reset_requests)
        if state.limit_tokens is not None and state.remaining_tokens is not None:
            headers["x-ratelimit-limit-tokens"] = f"{state.limit_tokens:.0f}"
            headers["x-ratelimit-remaining-tokens"] = f"{state.remaining_tokens:.0f}"
            headers["x-ratelimit-reset-tokens"] = _go_duration(state.reset_tokens)
        return headers

    def rate_limited(
        self, model: str, bucket: str, retry_after: float, state: LimitState | None
    ) -> web.Response:
        headers = self.rate_headers(state) if state is not None else {}
        ms = max(1, math.ceil(retry_after * 1000))
        headers["retry-after-ms"] = str(ms)
        headers["retry-after"] = str(max(1, math.ceil(retry_after)))
        what = "requests per min (RPM)" if bucket == "requests" else "tokens per min (TPM)"
        limit = (
            state.limit_requests
            if bucket == "requests" and state
            else (state.limit_tokens if state else None)
        )
        detail = f": Limit {limit:.0f}" if limit is not None else ""
        message = (
            f"Rate limit reached for {model} in organization org-fake on {what}"
            f"{detail}. Please try again in {ms}ms."
        )
        return self.error(429, message, headers=headers)


class AnthropicDialect(Dialect):
    """POST /v1/messages."""

    name = "anthropic"

    def api_key(self, request: web.Request) -> str | None:
        return request.headers.get("x-api-key") or _bearer(request)

    def parse(self, request: web.Request, body: Any) -> tuple[str, GenerateRequest]:
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise BadRequest("model: Field required")
        if body.get("stream"):
            raise BadRequest("stream: not supported by the fake server")
        version = request.headers.get("anthropic-version", "")
        if version >= ANTHROPIC_NO_SAMPLING_VERSION:
            for name in ("temperature", "top_p", "top_k"):
                if name in body:
                    raise BadRequest(f"{name}: Extra inputs are not permitted")
        max_tokens = _int_field(body, "max_tokens")
        if max_tokens is None:
            raise BadRequest("max_tokens: Field required")
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("messages: must be a non-empty list")
        messages: list[Message] = []
        for i, m in enumerate(raw):
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                raise BadRequest(f"messages.{i}.role: must be 'user' or 'assistant'")
            messages.append(Message(m["role"], _text_of(m.get("content"), f"messages.{i}.content")))
        system = body.get("system")
        return model, GenerateRequest(
            model=model,
            messages=tuple(messages),
            temperature=_float_field(body, "temperature", 1.0),
            max_tokens=max_tokens,
            system=_text_of(system, "system") if system is not None else None,
        )

    def success_body(self, model: str, text: str, usage: Usage, finished: bool) -> dict[str, Any]:
        read = usage.cache_read_tokens or 0
        written = usage.cache_write_tokens or 0
        return {
            "id": f"msg_{_request_id()}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": "end_turn" if finished else "max_tokens",
            "stop_sequence": None,
            "usage": {
                # The API counts cache reads and writes apart from input_tokens.
                "input_tokens": usage.input_tokens - read - written,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
            },
        }

    def cache_segments(self, request: GenerateRequest, body: Any) -> list[Segment]:
        """System and message blocks in order; a block with `cache_control` is a breakpoint."""
        segments: list[Segment] = []

        def add(content: Any) -> None:
            if isinstance(content, str):
                segments.append((content, False))
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        segments.append((part["text"], part.get("cache_control") is not None))

        if isinstance(body, dict):
            add(body.get("system"))
            for m in body.get("messages") or []:
                if isinstance(m, dict):
                    add(m.get("content"))
        return [seg for seg in segments if seg[0]]

    def error(
        self,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        reason: str | None = None,
    ) -> web.Response:
        kind = reason or {
            400: "invalid_request_error",
            401: "authentication_error",
            402: "billing_error",
            403: "permission_error",
            404: "not_found_error",
            413: "request_too_large",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        request_id = f"req_{_request_id()}"
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": request_id,
        }
        out = {"request-id": request_id, **(headers or {})}
        return web.json_response(body, status=status, headers=out)

    def auth_error(self, status: int, has_key: bool, key: str = "") -> web.Response:
        if status == 403:
            return self.error(
                403, "Your API key does not have permission to use the specified resource."
            )
        return self.error(401, "invalid x-api-key" if has_key else "x-api-key header is required")

    def rate_headers(self, state: LimitState) -> dict[str, str]:
        now = datetime.now(UTC)

        def reset(seconds: float) -> str:
            return (now + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")

        headers: dict[str, str] = {}
        if state.limit_requests is not None and state.remaining_requests is not None:
            headers["anthropic-ratelimit-requests-limit"] = f"{state.limit_requests:.0f}"
            headers["anthropic-ratelimit-requests-remaining"] = f"{state.remaining_requests:.0f}"
            headers["anthropic-ratelimit-requests-reset"] = reset(state.reset_requests)
        if state.limit_tokens is not None and state.remaining_tokens is not None:
            headers["anthropic-ratelimit-tokens-limit"] = f"{state.limit_tokens:.0f}"
            headers["anthropic-ratelimit-tokens-remaining"] = f"{state.remaining_tokens:.0f}"
            headers["anthropic-ratelimit-tokens-reset"] = reset(state.reset_tokens)
        return headers

    def rate_limited(
        self, model: str, bucket: str, retry_after: float, state: LimitState | None
    ) -> web.Response:
        headers = self.rate_headers(state) if state is not None else {}
        # Anthropic sends whole seconds.
        headers["retry-after"] = str(max(1, math.ceil(retry_after)))
        what = "requests" if bucket == "requests" else "tokens"
        message = (
            f"This request would exceed the rate limit for your organization of {what} "
            f"per minute. For details, refer to the rate limits documentation."
        )
        return self.error(429, message, headers=headers)


_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class GeminiDialect(Dialect):
    """POST /v1beta/models/{model}:generateContent."""

    name = "gemini"
    usage_fields = ("usageMetadata",)

    def api_key(self, request: web.Request) -> str | None:
        return request.headers.get("x-goog-api-key") or request.query.get("key") or None

    def parse(self, request: web.Request, body: Any) -> tuple[str, GenerateRequest]:
        return self.parse_body(request.match_info["model"], body)

    def parse_body(self, model: str, body: Any) -> tuple[str, GenerateRequest]:
        """A GenerateContentRequest body for `model` (a batch line's `request` too)."""
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        raw = body.get("contents")
        if not isinstance(raw, list) or not raw:
            raise BadRequest("contents is not specified")
        messages: list[Message] = []
        for i, c in enumerate(raw):
            if not isinstance(c, dict):
                raise BadRequest(f"contents[{i}]: must be an object")
            role = c.get("role", "user")
            if role not in ("user", "model"):
                raise BadRequest(f"contents[{i}].role: must be 'user' or 'model'")
            text = _text_of(c.get("parts", []), f"contents[{i}].parts")
            messages.append(Message("user" if role == "user" else "assistant", text))
        system_obj = body.get("systemInstruction") or body.get("system_instruction")
        system = None
        if isinstance(system_obj, dict):
            system = _text_of(system_obj.get("parts", []), "systemInstruction.parts")
        config = body.get("generationConfig") or {}
        if not isinstance(config, dict):
            raise BadRequest("generationConfig: must be an object")
        max_tokens = _int_field(config, "maxOutputTokens", "max_output_tokens")
        return model, GenerateRequest(
            model=model,
            messages=tuple(messages),
            temperature=_float_field(config, "temperature", 1.0),
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            system=system,
        )

    def success_body(self, model: str, text: str, usage: Usage, finished: bool) -> dict[str, Any]:
        content: dict[str, Any] = {"role": "model"}
        if text:
            content["parts"] = [{"text": text}]
        metadata: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "totalTokenCount": usage.total,
        }
        if usage.output_tokens:
            metadata["candidatesTokenCount"] = usage.output_tokens
        if usage.cache_read_tokens:
            metadata["cachedContentTokenCount"] = usage.cache_read_tokens
        return {
            "candidates": [
                {
                    "content": content,
                    "finishReason": "STOP" if finished else "MAX_TOKENS",
                    "index": 0,
                }
            ],
            "usageMetadata": metadata,
            "modelVersion": model,
            "responseId": _request_id(),
        }

    def error(
        self,
        status: int,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        reason: str | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> web.Response:
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": reason or _GEMINI_STATUS.get(status, "UNKNOWN"),
        }
        if details:
            error["details"] = details
        return web.json_response({"error": error}, status=status, headers=headers)

    def auth_error(self, status: int, has_key: bool, key: str = "") -> web.Response:
        # Gemini answers a wrong key with 400 INVALID_ARGUMENT / API_KEY_INVALID.
        if status == 403 or not has_key:
            return self.error(
                403,
                "Method doesn't allow unregistered callers (callers without "
                "established identity). Please use API Key or other form of "
                "API consumer identity to call this API."
                if not has_key
                else "The caller does not have permission",
            )
        info = {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }
        return self.error(400, "API key not valid. Please pass a valid API key.", details=[info])

    def rate_limited(
        self, model: str, bucket: str, retry_after: float, state: LimitState | None
    ) -> web.Response:
        metric = "requests" if bucket == "requests" else "input_token_count"
        quota_id = (
            "GenerateRequestsPerMinutePerProjectPerModel"
            if bucket == "requests"
            else "GenerateContentInputTokensPerModelPerMinute"
        )
        limit = (
            state.limit_requests
            if bucket == "requests" and state
            else (state.limit_tokens if state else None)
        )
        violation: dict[str, Any] = {
            "quotaMetric": f"generativelanguage.googleapis.com/generate_content_{metric}",
            "quotaId": quota_id,
            "quotaDimensions": {"model": model, "location": "global"},
        }
        if limit is not None:
            violation["quotaValue"] = f"{limit:.0f}"
        details: list[dict[str, Any]] = [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [
                    {
                        "description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                    }
                ],
            },
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{max(0.001, retry_after):.3f}s",
            },
        ]
        message = (
            "You exceeded your current quota, please check your plan and billing "
            f"details. Please retry in {retry_after:.3f}s."
        )
        return self.error(429, message, details=details)


def truncated_json(body: dict[str, Any]) -> str:
    """A JSON document cut in half: what a broken proxy or a crash mid-write sends."""
    text = json.dumps(body)
    return text[: max(1, len(text) // 2)]


DIALECTS: dict[str, Dialect] = {
    d.name: d for d in (OpenAIDialect(), AnthropicDialect(), GeminiDialect())
}
