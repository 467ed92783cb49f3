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

    def prompt_chars(self) -> int:
        """Total characters of prompt text (for token estimates)."""
        return sum(len(m.content) for m in self.messages) + len(self.system or "")


@dataclass(frozen=True)
class Usage:
    """Tokens a call consumed, as reported by the provider."""

    input_tokens: int
    output_tokens: int
    estimated: bool = False  # counted from the text: the provider reported no usage

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


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
