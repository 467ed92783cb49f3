"""Helpers of the SDK providers: retry hints, classification, redaction, URLs."""

from __future__ import annotations

import email.utils
import threading

import httpx2
import openai
import pytest

from arena.config import ProviderConfig
from arena.providers import create_provider
from arena.providers._remote import (
    MAX_ERROR_BODY_CHARS,
    QUOTA_RETRY_AFTER,
    RemoteProvider,
    base_url_problem,
    classify_status,
    google_error_reasons,
    parse_duration,
    redact_runs,
    retry_after_from_headers,
    retry_delay_from_google_body,
)
from arena.providers.openai import OpenAIProvider
from arena.types import ErrorKind


def test_retry_after_prefers_milliseconds_then_seconds_then_dates() -> None:
    assert retry_after_from_headers({"Retry-After-Ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after_from_headers({"retry-after": "3"}) == 3.0
    date = email.utils.formatdate(1000.0 + 42, usegmt=True)
    assert retry_after_from_headers({"retry-after": date}, now=1000.0) == pytest.approx(42)
    assert retry_after_from_headers({"retry-after": "soon"}) is None
    assert retry_after_from_headers({"retry-after-ms": "-5", "retry-after": "1"}) == 1.0
    assert retry_after_from_headers({}) is None


def test_google_retry_delay_and_reasons() -> None:
    body = {
        "error": {
            "code": 429,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
            ],
        }
    }
    assert retry_delay_from_google_body(body) == 37.0
    assert retry_delay_from_google_body([body]) == 37.0
    assert parse_duration("0.020s") == pytest.approx(0.02)
    assert parse_duration({"seconds": 2, "nanos": 500_000_000}) == 2.5
    assert parse_duration("2m") is None
    info = {
        "error": {
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ]
        }
    }
    assert google_error_reasons(info) == {"API_KEY_INVALID"}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, ErrorKind.RATE_LIMIT),
        (401, ErrorKind.AUTH),
        (403, ErrorKind.AUTH),
        (400, ErrorKind.PERMANENT),
        (404, ErrorKind.PERMANENT),
        (422, ErrorKind.PERMANENT),
        (408, ErrorKind.TRANSIENT),
        (500, ErrorKind.TRANSIENT),
        (503, ErrorKind.TRANSIENT),
        (529, ErrorKind.TRANSIENT),
    ],
)
def test_status_classification(status: int, kind: ErrorKind) -> None:
    assert classify_status(status) is kind


def test_base_url_problems() -> None:
    assert base_url_problem(None) is None
    assert base_url_problem("http://localhost:8000/v1") is None
    assert base_url_problem("https://api.example.com") is None
    for bad in ("localhost:8000", "ftp://host", "http://", "http://host:99999"):
        assert base_url_problem(bad) is not None, bad


def _openai(monkeypatch: pytest.MonkeyPatch, key: str = "sk-secret-key-123456") -> RemoteProvider:
    monkeypatch.setenv("ARENA_TEST_KEY", key)
    provider = create_provider(
        "o", ProviderConfig(type="openai", api_key_env="ARENA_TEST_KEY"), {}, 0
    )
    assert isinstance(provider, OpenAIProvider)
    return provider


def test_messages_never_carry_the_key_or_a_masked_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = _openai(monkeypatch)
    text = provider.redact("bad key sk-secret-key-123456 (shown as sk-sec***3456)")
    assert "sk-secret-key-123456" not in text and "***" not in text
    assert len(provider.redact("x" * 1000)) == 300


def test_openai_insufficient_quota_defers_instead_of_retrying(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = _openai(monkeypatch)
    response = httpx2.Response(
        429,
        headers={"retry-after": "1"},
        request=httpx2.Request("POST", "https://api.openai.com/v1/chat/completions"),
    )
    body = {
        "message": "You exceeded your current quota.",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
    exc = openai.RateLimitError("Error code: 429", response=response, body=body)
    assert isinstance(provider, OpenAIProvider)
    error = provider._status_error(exc)
    assert error.kind is ErrorKind.RATE_LIMIT and error.retry_after == QUOTA_RETRY_AFTER
    plain = openai.RateLimitError(
        "Error code: 429",
        response=response,
        body={"message": "slow down", "code": "rate_limit_exceeded"},
    )
    assert provider._status_error(plain).retry_after == 1.0


@pytest.mark.parametrize("key", ["sk-abc\ndef", "sk-abc def", "sk-abcé"])
def test_a_key_that_cannot_be_sent_is_refused_before_any_call(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("ARENA_TEST_BAD_KEY", key)
    provider = create_provider(
        "oa", ProviderConfig(type="openai", api_key_env="ARENA_TEST_BAD_KEY"), {}, 0
    )
    (problem,) = provider.check_ready()
    assert "ARENA_TEST_BAD_KEY" in problem and "control or non-ASCII" in problem
    assert key not in problem


def _redact_in_thread(provider: RemoteProvider, text: str) -> str:
    """redact() run in a thread: a quadratic pass would still be running at the join."""
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(provider.redact(text)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert out, "redact() of the body did not finish"
    return out[0]


def test_a_huge_error_body_without_whitespace_is_cut_before_redaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-secret-key-123456"
    provider = _openai(monkeypatch, key)
    body = "a" * 2_000_000  # no whitespace, no mask: the old pattern backtracked for minutes
    text = _redact_in_thread(provider, body)
    assert text.startswith("aaaa") and text.endswith("...") and len(text) == 300
    assert _redact_in_thread(provider, "sk-ab***yz" + "b" * 2_000_000) == "[redacted]..."
    # A key split by the cut leaves no piece of it behind, short pieces included.
    for shift in range(1, len(key)):
        split = " " * (MAX_ERROR_BODY_CHARS - shift) + key
        assert key[:shift] not in _redact_in_thread(provider, split).replace("[redacted]", "")


def test_the_key_is_redacted_in_any_letter_case(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-AbCdEfGh0123456789"
    provider = _openai(monkeypatch, key)
    for echoed in (key.upper(), key.lower(), key.swapcase(), key[:12].upper()):
        text = provider.redact(f"invalid key {echoed} given")
        assert text == "invalid key [redacted] given", echoed
    assert redact_runs("xx0123ABCDEF89yy", "a0123abcdef89b") == "xx[redacted]yy"
