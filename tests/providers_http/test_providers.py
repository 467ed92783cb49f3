"""Each provider through its real SDK against the fake server: answers, faults, hints, auth."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.config import ModelConfig, ProviderConfig, SimParams
from arena.fakeserver import FakeServer
from arena.providers import Provider, create_provider
from arena.providers.sim import find_signatures
from arena.types import ErrorKind, GenerateRequest, GenerateResult, Message, ProviderError
from arena.types import estimate_tokens as est
from tests.providers_http.conftest import (
    CANARY,
    FORBIDDEN_KEY,
    KEY_ENV,
    KEYS,
    RPM1_KEYS,
    TYPES,
    make_provider,
)

pytestmark = [
    pytest.mark.parametrize("ptype", TYPES),
    pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning"),
]


def _request(
    model: str, text: str = "What is the capital of France?", **kw: Any
) -> GenerateRequest:
    return GenerateRequest(model=model, messages=(Message("user", text),), **kw)


def _generate(provider: Provider, request: GenerateRequest) -> GenerateResult:
    async def run() -> GenerateResult:
        try:
            return await provider.generate(request)
        finally:
            await provider.close()

    return asyncio.run(run())


def _error(provider: Provider, request: GenerateRequest) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        _generate(provider, request)
    return info.value


def test_answer_and_usage_match_the_simulator(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = GenerateRequest(
        model="alpha",
        messages=(
            Message("user", f"Turn one ({ptype})?"),
            Message("assistant", "An answer."),
            Message("user", "Turn two?"),
        ),
        system="Be brief.",
        max_tokens=300,
    )
    result = _generate(make_provider(server, ptype, monkeypatch), request)
    sim = create_provider(
        "sim",
        ProviderConfig(type="sim"),
        {"alpha": ModelConfig(provider="sim", sim=SimParams(skill=2.0, answer_words=20))},
        5,
    )
    expected = asyncio.run(sim.generate(request))
    assert result.text == expected.text
    assert [s.author for s in find_signatures(result.text)] == ["alpha"]
    assert result.usage.input_tokens == est(request.prompt_chars())
    assert result.usage.output_tokens == est(len(result.text))
    assert all(k == k.lower() for k in result.rate_headers)


def test_rate_headers_are_lower_cased_for_the_governor(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = make_provider(server, ptype, monkeypatch, key=RPM1_KEYS[ptype])
    server.reset()
    result = _generate(provider, _request("alpha", f"headers {ptype}"))
    expected = {
        "openai": "x-ratelimit-remaining-requests",
        "anthropic": "anthropic-ratelimit-requests-remaining",
        "gemini": None,  # Gemini sends no rate-limit headers
    }[ptype]
    if expected is not None:
        assert result.rate_headers[expected] == "0"


def test_rate_limit_from_the_servers_own_limits_carries_its_hint(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.reset()
    provider = make_provider(server, ptype, monkeypatch, key=RPM1_KEYS[ptype])
    _generate(provider, _request("alpha", "first"))
    err = _error(
        make_provider(server, ptype, monkeypatch, key=RPM1_KEYS[ptype]), _request("alpha", "second")
    )
    assert err.kind is ErrorKind.RATE_LIMIT and err.status == 429
    # 1 request/minute: the next one fits in about 60 seconds.
    assert err.retry_after is not None and 55 <= err.retry_after <= 61


@pytest.mark.parametrize(
    ("model", "kind", "status", "words"),
    [
        ("f500", ErrorKind.TRANSIENT, 500, "error"),
        ("f503", ErrorKind.TRANSIENT, 503, "error"),
        ("f529", ErrorKind.TRANSIENT, 529, "overloaded"),
        ("fdrop", ErrorKind.TRANSIENT, None, "connection error"),
        ("fhang", ErrorKind.TRANSIENT, None, "timed out after 0.5s"),
        ("fmalformed", ErrorKind.TRANSIENT, None, "malformed response"),
        ("fempty", ErrorKind.TRANSIENT, None, "empty response"),
        ("nosuchmodel", ErrorKind.PERMANENT, 404, "does not exist"),
    ],
)
def test_faults_are_classified(
    ptype: str,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    kind: ErrorKind,
    status: int | None,
    words: str,
) -> None:
    err = _error(
        make_provider(server, ptype, monkeypatch, timeout=0.5),
        _request(model, f"fault {model}", max_tokens=500),
    )
    assert err.kind is kind, err
    assert err.status == status
    assert words in str(err).lower()
    assert err.retry_after is None


def test_empty_answer_cut_at_max_tokens_is_permanent(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sim answer is longer than 5 tokens: the server reports a length stop.
    err = _error(make_provider(server, ptype, monkeypatch), _request("fempty", max_tokens=5))
    assert err.kind is ErrorKind.PERMANENT
    assert "raise max_tokens" in str(err)
    # the provider billed the prompt: the error carries that usage (cost, budget)
    assert err.usage is not None and err.usage.input_tokens > 0


def test_slow_answer_within_the_timeout_succeeds(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _generate(
        make_provider(server, ptype, monkeypatch, timeout=5), _request("fslow", f"slow {ptype}")
    )
    assert find_signatures(result.text)


def test_injected_rate_limit_carries_each_apis_retry_hint(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = _error(make_provider(server, ptype, monkeypatch), _request("frl"))
    assert err.kind is ErrorKind.RATE_LIMIT and err.status == 429
    # OpenAI: retry-after-ms; Anthropic: whole seconds in retry-after; Gemini: RetryInfo.
    assert err.retry_after == {"openai": 2.5, "anthropic": 3.0, "gemini": 2.5}[ptype]


def test_bad_request_is_permanent(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = _error(make_provider(server, ptype, monkeypatch), _request("alpha", max_tokens=0))
    assert err.kind is ErrorKind.PERMANENT and err.status == 400


@pytest.mark.parametrize("which", ["wrong", "forbidden"])
def test_auth_failures(
    ptype: str, which: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = CANARY if which == "wrong" else FORBIDDEN_KEY
    err = _error(make_provider(server, ptype, monkeypatch, key=key), _request("alpha"))
    assert err.kind is ErrorKind.AUTH
    # Gemini answers a wrong key with 400 API_KEY_INVALID.
    wrong_status = 400 if ptype == "gemini" else 401
    assert err.status == (wrong_status if which == "wrong" else 403)
    assert CANARY not in str(err) and CANARY not in repr(err.args)


def test_unreachable_server_is_transient(ptype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV[ptype], KEYS[ptype])
    # Port 9 (discard) on localhost: nothing listens there in a test sandbox.
    config = ProviderConfig(
        type=ptype, base_url="http://127.0.0.1:9", api_key_env=KEY_ENV[ptype], timeout=2
    )
    err = _error(create_provider("p", config, {}, 0), _request("alpha"))
    assert err.kind is ErrorKind.TRANSIENT
    assert "connection error" in str(err)


def test_missing_key_and_bad_base_url_are_reported_before_any_call(
    ptype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_TEST_UNSET_KEY", raising=False)
    config = ProviderConfig(
        type=ptype, base_url="localhost:8000", api_key_env="ARENA_TEST_UNSET_KEY"
    )
    provider = create_provider("mine", config, {}, 0)
    problems = provider.check_ready()
    assert len(problems) == 2
    assert "providers.mine: no API key" in problems[0] and "ARENA_TEST_UNSET_KEY" in problems[0]
    assert "providers.mine.base_url" in problems[1]
    err = _error(provider, _request("alpha"))
    assert err.kind is ErrorKind.AUTH


def test_default_key_variable(ptype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    default = {
        "openai": "OPENAI_API_KEY",
        "anthropic": "ANTHROPIC_API_KEY",
        "gemini": "GEMINI_API_KEY",
    }[ptype]
    monkeypatch.delenv(default, raising=False)
    provider = create_provider("d", ProviderConfig(type=ptype), {}, 0)
    assert default in provider.check_ready()[0]
    monkeypatch.setenv(default, CANARY)
    assert create_provider("d", ProviderConfig(type=ptype), {}, 0).check_ready() == []
