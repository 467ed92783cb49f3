"""Real providers under the scheduler over HTTP: retries, hints, auth stop, deferral, headers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from arena.config import RetryConfig
from arena.fakeserver import FakeServer
from arena.providers import Provider
from arena.scheduler import CallOutcome, PriceTable, Scheduler
from arena.types import ErrorKind, GenerateRequest, Limits, Message
from tests.providers_http.conftest import CANARY, RPM1_KEYS, TYPES, make_provider

pytestmark = [
    pytest.mark.parametrize("ptype", TYPES),
    pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning"),
]

RETRY = RetryConfig(max_attempts=4, backoff_base=0.01, backoff_max=0.05)
T = TypeVar("T")


def _request(model: str, text: str) -> GenerateRequest:
    return GenerateRequest(model=model, messages=(Message("user", text),), max_tokens=200)


def _run(provider: Provider, main: Callable[[], Awaitable[T]]) -> T:
    async def wrapped() -> T:
        try:
            return await main()
        finally:
            await provider.close()

    return asyncio.run(wrapped())


def _scheduler(
    server: FakeServer,
    ptype: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    key: str | None = None,
    limits: Limits | None = None,
    prices: PriceTable | None = None,
) -> tuple[Scheduler, Provider]:
    provider = make_provider(server, ptype, monkeypatch, key=key)
    sched = Scheduler(
        {"p": provider},
        {"p": limits or Limits(max_concurrency=4)},
        RETRY,
        prices=prices,
        max_retry_after=60.0,
    )
    return sched, provider


def test_transient_errors_are_retried_until_success(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sched, provider = _scheduler(server, ptype, monkeypatch)
    outcome = _run(provider, lambda: sched.call("p", _request("f503_twice", f"retry {ptype}")))
    assert outcome.ok and outcome.attempts == 3


def test_retry_hint_pauses_the_provider_then_succeeds(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sched, provider = _scheduler(server, ptype, monkeypatch)
    start = time.monotonic()
    outcome = _run(provider, lambda: sched.call("p", _request("frl_once", f"hint {ptype}")))
    waited = time.monotonic() - start
    assert outcome.ok and outcome.attempts == 2
    # Hint 0.3 s (Anthropic rounds up to whole seconds: 1 s).
    assert waited >= (1.0 if ptype == "anthropic" else 0.3)


def test_long_retry_hint_defers_the_provider(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sched, provider = _scheduler(server, ptype, monkeypatch)

    async def main() -> list[CallOutcome]:
        return list(
            await asyncio.gather(
                *(sched.call("p", _request("fquota", f"quota {ptype} {i}")) for i in range(6))
            )
        )

    outcomes = _run(provider, main)
    assert {o.status for o in outcomes} == {"deferred"}
    assert "p" in sched.deferred_providers


def test_auth_failure_stops_the_providers_calls_with_one_message(
    ptype: str,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.reset()
    sched, provider = _scheduler(
        server, ptype, monkeypatch, key=CANARY, limits=Limits(max_concurrency=8)
    )

    async def main() -> list[CallOutcome]:
        return list(
            await asyncio.gather(
                *(sched.call("p", _request("alpha", f"auth {ptype} {i}")) for i in range(20))
            )
        )

    with caplog.at_level(logging.ERROR, logger="arena.scheduler"):
        outcomes = _run(provider, main)
    assert all(o.status == "failed" and o.error_kind is ErrorKind.AUTH for o in outcomes)
    assert len({o.error for o in outcomes}) == 1
    assert "authentication failed" in (outcomes[0].error or "")
    # The first attempt runs alone (probe): a wrong key costs one request.
    assert server.stats()["counts"][f"{ptype}.requests"] == 1
    assert len([r for r in caplog.records if "authentication failed" in r.getMessage()]) == 1
    assert all(CANARY not in (o.error or "") for o in outcomes)
    assert CANARY not in caplog.text


def test_cost_is_priced_from_reported_usage(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = PriceTable({"alpha": (1.0, 2.0)})
    sched, provider = _scheduler(server, ptype, monkeypatch, prices=prices)
    outcome = _run(provider, lambda: sched.call("p", _request("alpha", f"cost {ptype}")))
    assert outcome.ok and outcome.result is not None
    usage = outcome.result.usage
    assert outcome.cost_usd == pytest.approx((usage.input_tokens + 2 * usage.output_tokens) / 1e6)
    assert sched.spent_usd == pytest.approx(outcome.cost_usd)


def test_governor_resyncs_from_rate_headers(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.reset()
    # The client thinks it may send 600/min; the key allows 1/min and says so in headers.
    sched, provider = _scheduler(
        server, ptype, monkeypatch, key=RPM1_KEYS[ptype], limits=Limits(max_concurrency=1, rpm=600)
    )
    outcome = _run(provider, lambda: sched.call("p", _request("alpha", f"sync {ptype}")))
    assert outcome.ok
    available = sched.governor("p").requests_available
    assert available is not None
    if ptype == "gemini":
        assert available > 0  # no rate headers: the client's own bucket only
    else:
        assert available < 0.5  # lowered to the server's "0 remaining"
