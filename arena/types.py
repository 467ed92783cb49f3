"""Core value types shared by every layer of arena.

Nothing in here does I/O. Every other module may import from this one; this one
imports nothing from arena.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "CallStatus",
    "ErrorKind",
    "GenerateRequest",
    "GenerateResult",
    "Limits",
    "Message",
    "ProviderError",
    "Usage",
    "Verdict",
    "estimate_tokens",
    "stable_id",
]


class Verdict(StrEnum):
    """A reviewer's judgment of one battle."""

    A = "A"
    B = "B"
    TIE = "tie"
    INVALID = "invalid"


class CallStatus(StrEnum):
    """Outcome of one logged call."""

    OK = "ok"
    FAILED = "failed"
    INVALID = "invalid"
    # Some turns of a multi-turn call were paid for and logged, the rest not
    # yet: the call is pending and resumes from them; never ranked.
    PARTIAL = "partial"


class ErrorKind(StrEnum):
    """How a provider failure should be handled by the scheduler."""

    RATE_LIMIT = "rate_limit"
    TRANSIENT = "transient"
    PERMANENT = "permanent"
    AUTH = "auth"


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str  # "user" | "assistant"
    content: str


@dataclass(frozen=True)
class GenerateRequest:
    """What the engine asks a provider for: one completion."""

    model: str  # provider-side model id
    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 1024
    system: str | None = None
    # A model's reasoning effort and provider-specific parameters (tournament YAML).
    reasoning_effort: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, hash=False)
    # Prompt caching hints (docs/cost.md): character offsets into the last
    # message's content after which a provider may place a cache breakpoint
    # (Anthropic `cache_control`), and a key that routes requests sharing a
    # prefix to the same cache (OpenAI `prompt_cache_key`). Neither changes
    # the text sent.
    cache_breaks: tuple[int, ...] = ()
    cache_key: str | None = None

    def prompt_chars(self) -> int:
        """Total characters of prompt text (for token estimates)."""
        return sum(len(m.content) for m in self.messages) + len(self.system or "")


@dataclass(frozen=True)
class Usage:
    """Tokens a call consumed, as reported by the provider.

    `input_tokens` counts every prompt token, cached ones included, and
    `output_tokens` every generated token, reasoning included; the cache and
    reasoning counts say how many of those were billed apart (None: the
    provider did not say).
    """

    input_tokens: int
    output_tokens: int
    estimated: bool = False  # counted from the text: the provider reported no usage
    cache_read_tokens: int | None = None  # of input_tokens: read from the prompt cache
    cache_write_tokens: int | None = None  # of input_tokens: written to the prompt cache
    reasoning_tokens: int | None = None  # of output_tokens: reasoning / thinking

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        """Both usages together (a count stays None only when neither has it)."""
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.estimated or other.estimated,
            _add_counts(self.cache_read_tokens, other.cache_read_tokens),
            _add_counts(self.cache_write_tokens, other.cache_write_tokens),
            _add_counts(self.reasoning_tokens, other.reasoning_tokens),
        )


def _add_counts(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True)
class GenerateResult:
    """A provider's successful answer."""

    text: str
    usage: Usage
    # Rate-limit headers (lower-cased names) when the provider sent any.
    rate_headers: dict[str, str] = field(default_factory=dict)


class ProviderError(Exception):
    """A classified provider failure. Providers raise this and never retry."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        usage: Usage | None = None,
        overload: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        self.status = status
        # Tokens the provider billed for a response that was still unusable
        # (empty, refused, cut): they count toward cost and budget.
        self.usage = usage
        # The server could not keep up (timeout, 5xx, refused connection): the
        # governor narrows the provider's concurrency window.
        self.overload = overload

    def __str__(self) -> str:
        code = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind.value}{code}: {self.message}"


@dataclass(frozen=True)
class Limits:
    """Per-provider limits. None means unlimited."""

    max_concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None


def estimate_tokens(text_chars: int) -> int:
    """Rough token count for a text length (4 characters per token)."""
    return max(1, (text_chars + 3) // 4)


def stable_id(kind: str, payload: Any) -> str:
    """A content-derived call id: same inputs, same id, across runs and machines."""
    blob = json.dumps({"kind": kind, "payload": payload}, sort_keys=True, default=str)
    return f"{kind[:1]}-{hashlib.sha256(blob.encode()).hexdigest()[:24]}"
