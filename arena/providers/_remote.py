"""What the SDK-backed providers share: keys, URLs, retry hints, error classification.

Nothing here imports an SDK, so the registry stays lazy.
"""

from __future__ import annotations

import email.utils
import math
import os
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from arena.config import ModelConfig, ProviderConfig
from arena.providers._base import Provider
from arena.types import ErrorKind, ProviderError

# A 429 that says "quota exhausted" or "billing" is not a burst limit: retrying
# soon will not help, so it carries a hint long enough to defer the provider.
QUOTA_RETRY_AFTER = 24 * 3600.0

MAX_MESSAGE_CHARS = 300
# An error message (often a whole response body) is cut to this many characters
# before anything else looks at it, so a huge body costs no more than a small one.
MAX_ERROR_BODY_CHARS = 4096

# A whitespace-free word holding this is a masked key as some APIs echo them
# ("sk-abc***wxyz") and is redacted whole.
MASK_MARK = "***"
# Any run of this many characters of the key is redacted wherever it appears
# (a server echoing "sk-proj-abcd...wxyz" leaks its first and last characters).
KEY_RUN_CHARS = 8
REDACTED = "[redacted]"
# A lone UTF-16 surrogate: a JSON body may carry one ("\ud800"), UTF-8 cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


class RemoteProvider(Provider):
    """Base of the SDK-backed providers: the key, the base URL and error helpers.

    A subclass sets `default_key_env` and `label`, builds its SDK client
    lazily (with the SDK's own retries off) and turns SDK exceptions into
    `ProviderError`s through `fail`, which strips the key from every message.
    """

    default_key_env: ClassVar[str]
    label: ClassVar[str]  # the API's name in messages
    over_network: ClassVar[bool] = True

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        super().__init__(name, config, models, seed)
        self.key_env = config.api_key_env or self.default_key_env
        key = os.environ.get(self.key_env, "").strip()
        self._key: str | None = key or None

    def check_ready(self) -> list[str]:
        """A missing key or a malformed base_url (never the key itself)."""
        problems: list[str] = []
        if self._key is None:
            problems.append(
                f"providers.{self.name}: no API key for {self.label}: "
                f"set the environment variable {self.key_env}"
            )
        elif not self._key.isascii() or not self._key.isprintable() or " " in self._key:
            # Such a key cannot go into an HTTP header: every call would fail
            # before reaching the provider (and be retried as a glitch).
            problems.append(
                f"providers.{self.name}: the API key in {self.key_env} contains spaces, "
                "control or non-ASCII characters (a paste error?)"
            )
        url_problem = base_url_problem(self.config.base_url)
        if url_problem is not None:
            problems.append(f"providers.{self.name}.base_url: {url_problem}")
        return problems

    def api_key(self) -> str:
        """The key, or an AUTH error when the variable is unset."""
        if self._key is None:
            raise ProviderError(
                ErrorKind.AUTH, f"no API key: the environment variable {self.key_env} is not set"
            )
        return self._key

    def redact(self, text: str) -> str:
        """`text` without the key or any 8-character run of it (in any letter case), shortened.

        The text is cut to `MAX_ERROR_BODY_CHARS` first; every step after is
        linear in its length. Words holding a masked echo of a key ("sk-ab***yz")
        are redacted too.
        """
        cut = len(text) > MAX_ERROR_BODY_CHARS
        text = text[:MAX_ERROR_BODY_CHARS]
        if self._key:
            # Also the escaped forms an HTTP library quotes an illegal header value in
            # (a key with a control character: "Illegal header value b'Bearer sk-..\\n..'").
            escaped = self._key.encode("unicode_escape").decode("ascii")
            as_bytes = repr(self._key.encode("utf-8", "backslashreplace"))[2:-1]
            forms = sorted(set((self._key, escaped, as_bytes)), key=len, reverse=True)
            text = redact_secrets(text, forms, cut=cut)
        words = [REDACTED if MASK_MARK in word else word for word in text.split()]
        text = " ".join(words)
        if cut and not text.endswith("..."):
            text += "..."
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 3] + "..."
        return text

    def fail(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> ProviderError:
        """A ProviderError with a key-free message."""
        return ProviderError(kind, self.redact(message), status=status, retry_after=retry_after)

    def status_error(
        self,
        status: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        quota: bool = False,
        auth: bool = False,
        retry_after: float | None = None,
    ) -> ProviderError:
        """Classify an HTTP error status (with the API's message and headers)."""
        kind = classify_status(status)
        if auth:
            kind = ErrorKind.AUTH
        if quota:
            kind = ErrorKind.RATE_LIMIT
            retry_after = QUOTA_RETRY_AFTER
        elif kind is ErrorKind.RATE_LIMIT and retry_after is None and headers is not None:
            retry_after = retry_after_from_headers(headers)
        error = self.fail(kind, message or f"HTTP {status}", status=status, retry_after=retry_after)
        error.overload = kind is ErrorKind.TRANSIENT and (status >= 500 or status == 408)
        return error

    def timeout_error(self) -> ProviderError:
        """A request that outlived the configured timeout (retried; the server is overloaded)."""
        error = self.fail(ErrorKind.TRANSIENT, f"request timed out after {self.config.timeout:g}s")
        error.overload = True
        return error

    def connection_error(self, exc: BaseException) -> ProviderError:
        """A refused, reset or dropped connection (retried; the server is overloaded)."""
        error = self.fail(ErrorKind.TRANSIENT, f"connection error: {describe_cause(exc)}")
        error.overload = True
        return error

    def malformed_error(self, exc: BaseException) -> ProviderError:
        """A 2xx answer that could not be read (retried)."""
        return self.fail(ErrorKind.TRANSIENT, f"malformed response: {describe_cause(exc)}")

    def empty_error(
        self, finish_reason: str | None, *, permanent_reasons: Iterable[str]
    ) -> ProviderError:
        """An answer without text: permanent when the finish reason says why, else retried.

        A model cut at max_tokens before writing anything, or blocked by a
        filter, will do the same on a retry; an empty answer that simply
        stopped is treated as a glitch and retried.
        """
        reason = finish_reason or "unknown"
        if reason.lower() in {r.lower() for r in permanent_reasons}:
            hint = ""
            if reason.lower() in ("length", "max_tokens"):
                hint = " (raise max_tokens: the model used them all before writing an answer)"
            return self.fail(
                ErrorKind.PERMANENT, f"empty response (finish reason {reason}){hint}", status=200
            )
        return self.fail(ErrorKind.TRANSIENT, f"empty response (finish reason {reason})")


def redact_runs(text: str, secret: str, run: int = KEY_RUN_CHARS) -> str:
    """`text` with every stretch that is a run of >= `run` characters of `secret` redacted.

    Letter case is ignored: a key echoed upper-cased is still the key.
    """
    return redact_secrets(text, [secret], run=run)


def redact_secrets(
    text: str, secrets: Iterable[str], *, run: int = KEY_RUN_CHARS, cut: bool = False
) -> str:
    """`text` with every secret, and every run of >= `run` characters of one, redacted.

    Letter case is ignored. `cut`: the text was truncated, so a shorter piece
    of a secret at its very end (the start of a secret the cut split) goes too.
    """
    folded = _fold(text)
    keys = [_fold(s) for s in secrets if s]
    spans: list[tuple[int, int]] = []
    for key in keys:
        start = folded.find(key)
        while start >= 0:
            spans.append((start, start + len(key)))
            start = folded.find(key, start + len(key))
        if len(key) >= run:
            spans.extend(_run_spans(folded, key, run))
    if cut:
        longest = min(run - 1, len(folded))
        pieces_at_end = (n for n in range(longest, 0, -1) if any(folded[-n:] in k for k in keys))
        tail = next(pieces_at_end, 0)
        if tail:
            spans.append((len(folded) - tail, len(folded)))
    if not spans:
        return text
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:  # overlapping or touching: one redaction
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    pieces: list[str] = []
    last = 0
    for start, end in merged:
        pieces.append(text[last:start])
        pieces.append(REDACTED)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _fold(text: str) -> str:
    """Lower case, one character for one (so positions in the result are positions in `text`)."""
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def _run_spans(text: str, secret: str, run: int) -> list[tuple[int, int]]:
    """Where `text` holds stretches of >= `run` consecutive characters of `secret`."""
    if len(text) < run:
        return []
    grams = {secret[i : i + run] for i in range(len(secret) - run + 1)}
    spans: list[tuple[int, int]] = []
    i = 0
    while i <= len(text) - run:
        if text[i : i + run] not in grams:
            i += 1
            continue
        end = i + run  # extend while the stretch is still part of the secret
        while end < len(text) and end - i < len(secret) and text[i : end + 1] in secret:
            end += 1
        spans.append((i, end))
        i = end
    return spans


def valid_text(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate replaced by U+FFFD, and how many were replaced."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn("\ufffd", text)


def base_url_problem(url: str | None) -> str | None:
    """Why a base_url cannot work, or None."""
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError as exc:
        return f"'{url}' is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"'{url}' is not an http(s) URL with a host (e.g. http://localhost:8000/v1)"
    return None


def classify_status(status: int) -> ErrorKind:
    """The error kind of an HTTP status."""
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403):
        return ErrorKind.AUTH
    if status in (408, 409) or status >= 500:
        return ErrorKind.TRANSIENT
    return ErrorKind.PERMANENT


def retry_after_from_headers(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or HTTP date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
        except ValueError:
            ms = math.nan
        if math.isfinite(ms) and ms >= 0:
            return ms / 1000.0
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
        return max(0.0, seconds)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)s\s*$")


def parse_duration(value: Any) -> float | None:
    """A protobuf Duration ("37s", "0.020s" or {"seconds": 37, "nanos": 0}) in seconds."""
    if isinstance(value, str):
        m = _DURATION_RE.match(value)
        return float(m.group(1)) if m else None
    if isinstance(value, dict):
        try:
            return float(value.get("seconds", 0)) + float(value.get("nanos", 0)) / 1e9
        except (TypeError, ValueError):
            return None
    return None


def google_error_details(body: Any) -> list[dict[str, Any]]:
    """The `details` list of a Google API error body (either nesting)."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if not isinstance(body, dict):
        return []
    error = body.get("error", body)
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def retry_delay_from_google_body(body: Any) -> float | None:
    """`RetryInfo.retryDelay` of a RESOURCE_EXHAUSTED body, in seconds."""
    for detail in google_error_details(body):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_duration(detail.get("retryDelay"))
    return None


def google_error_reasons(body: Any) -> set[str]:
    """The `ErrorInfo.reason`s of a Google API error body (e.g. API_KEY_INVALID)."""
    return {
        str(d.get("reason"))
        for d in google_error_details(body)
        if str(d.get("@type", "")).endswith("google.rpc.ErrorInfo") and d.get("reason")
    }


def describe_cause(exc: BaseException) -> str:
    """The innermost cause of an exception chain, as 'Type: message'."""
    seen: set[int] = set()
    inner: BaseException = exc
    while inner.__cause__ is not None and id(inner.__cause__) not in seen:
        seen.add(id(inner))
        inner = inner.__cause__
    text = str(inner).strip()
    return f"{type(inner).__name__}: {text}" if text else type(inner).__name__


def lower_headers(headers: Iterable[tuple[str, str]] | Mapping[str, str] | None) -> dict[str, str]:
    """Header names lower-cased (the governor reads rate headers this way)."""
    if headers is None:
        return {}
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {str(k).lower(): str(v) for k, v in items}
