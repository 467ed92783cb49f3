"""Priority admission, the default network concurrency and its AIMD window, estimated usage."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from arena.config import RetryConfig
from arena.scheduler import Governor, PriceTable, Scheduler
from arena.scheduler._scheduler import DEFAULT_NETWORK_CONCURRENCY
from arena.types import ErrorKind, GenerateResult, Limits, ProviderError, Usage

from ._support import FakeProvider, ok, request, run_virtual

RETRY = RetryConfig(max_attempts=6, backoff_base=0.1, backoff_max=0.2)


class NetworkProvider(FakeProvider):
    """A scripted provider whose calls cross the network."""

    over_network = True


def _scheduler(provider: FakeProvider, limits: Limits | None = None, **kw: object) -> Scheduler:
    loop = asyncio.get_running_loop()
    return Scheduler(
        {"p": provider},
        {"p": limits} if limits is not None else {},
        RETRY,
        clock=loop.time,
        rng=random.Random(1),
        **kw,  # type: ignore[arg-type]
    )


def test_waiting_calls_are_admitted_by_priority_then_arrival() -> None:
    async def main() -> list[str]:
        gov = Governor(Limits(max_concurrency=1), clock=asyncio.get_running_loop().time)
        order: list[str] = []
        first = await gov.acquire(1)

        async def one(label: str, priority: int) -> None:
            permit = await gov.acquire(1, priority)
            order.append(label)
            await asyncio.sleep(1.0)
            gov.settle(permit, 1)

        tasks = [
            asyncio.ensure_future(one(label, prio))
            for label, prio in [("review1", 1), ("answer", 2), ("review2", 1), ("follow", 3)]
        ]
        await asyncio.sleep(0.5)
        gov.settle(first, 1)
        await asyncio.gather(*tasks)
        return order

    assert run_virtual(main) == ["follow", "answer", "review1", "review2"]


def test_scheduler_passes_priority_to_admission() -> None:
    async def main() -> list[int]:
        provider = FakeProvider(latency=1.0)
        seen: list[int] = []
        provider.default = lambda req: (seen.append(req.max_tokens), ok())[1]
        sched = _scheduler(provider, Limits(max_concurrency=1))
        calls = [
            sched.call("p", request(max_tokens=10 + i), priority=p)
            for i, p in enumerate([0, 0, 5, 1, 5])
        ]
        await asyncio.gather(*calls)
        return seen

    # The first call is admitted at once; the others wait and go by priority.
    assert run_virtual(main) == [10, 12, 14, 13, 11]


def test_network_provider_without_limits_gets_the_default_concurrency() -> None:
    async def main() -> tuple[int, int | None, int]:
        provider = NetworkProvider(latency=1.0)
        sched = _scheduler(provider)
        await asyncio.gather(*(sched.call("p", request()) for _ in range(30)))
        local = FakeProvider(latency=1.0)
        await asyncio.gather(*(_scheduler(local).call("p", request()) for _ in range(30)))
        return provider.peak, sched.governor("p").concurrency, local.peak

    peak, window, local_peak = run_virtual(main)
    assert peak == window == DEFAULT_NETWORK_CONCURRENCY
    assert local_peak == 30  # a local provider (the simulator) stays unlimited


def test_overload_halves_the_window_and_successes_grow_it_back() -> None:
    async def main() -> tuple[list[int], int]:
        overload = ProviderError(ErrorKind.TRANSIENT, "timed out", overload=True)
        provider = NetworkProvider([ok(), *[overload] * 4], latency=1.0)
        sched = _scheduler(provider, Limits(max_concurrency=8))
        gov = sched.governor("p")
        windows: list[int] = []

        async def watch() -> None:
            while True:
                window = gov.concurrency
                assert window is not None
                if not windows or windows[-1] != window:
                    windows.append(window)
                await asyncio.sleep(0.25)

        watcher = asyncio.ensure_future(watch())
        outcomes = await asyncio.gather(*(sched.call("p", request()) for _ in range(60)))
        watcher.cancel()
        assert all(o.ok for o in outcomes)
        return windows, provider.peak

    windows, peak = run_virtual(main)
    # One episode of four overloaded calls: 8 -> 4, never below 1, then +1 a window.
    assert windows[:2] == [8, 4]
    assert windows[1:] == [4, 5, 6, 7, 8]
    assert peak <= 8


def test_overload_never_raises_the_window_above_the_configured_max() -> None:
    async def main() -> int:
        provider = NetworkProvider(latency=1.0)
        sched = _scheduler(provider, Limits(max_concurrency=3))
        await asyncio.gather(*(sched.call("p", request()) for _ in range(40)))
        return provider.peak

    assert run_virtual(main) == 3


def test_missing_usage_is_estimated_from_the_text_counted_and_warned_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[Usage]:
        answer = GenerateResult("y" * 80, Usage(0, 0))
        provider = NetworkProvider(default=answer)
        prices = PriceTable({"m": (1_000_000.0, 1_000_000.0)})  # $1 a token
        sched = _scheduler(provider, prices=prices, budget_usd=1000.0)
        outcomes = [await sched.call("p", request(prompt_chars=40)) for _ in range(3)]
        assert sched.spent_usd == pytest.approx(3 * (10 + 20))
        assert all(o.cost_usd == pytest.approx(30.0) for o in outcomes)
        return [o.usage for o in outcomes]

    with caplog.at_level(logging.WARNING, logger="arena.scheduler._scheduler"):
        usages = run_virtual(main)
    assert usages == [Usage(10, 20, estimated=True)] * 3
    warnings = [r for r in caplog.records if "reports no token usage" in r.getMessage()]
    assert len(warnings) == 1 and "provider p" in warnings[0].getMessage()


def test_abort_cancels_hanging_attempts_which_end_stopped_and_unbilled() -> None:
    async def main() -> tuple[list[str], float, int]:
        provider = FakeProvider(latency=3600.0)  # hangs
        sched = _scheduler(provider, Limits(max_concurrency=2))
        calls = asyncio.gather(*(sched.call("p", request()) for _ in range(4)))
        await asyncio.sleep(1.0)
        sched.stop()  # the first signal: the two in flight go on, two waiting stop
        await asyncio.sleep(10.0)  # the grace period
        assert sched.in_flight == 2
        sched.abort()
        outcomes = await calls
        return [o.status for o in outcomes], asyncio.get_running_loop().time(), sched.in_flight

    statuses, ended, in_flight = run_virtual(main)
    assert statuses == ["stopped"] * 4 and ended == pytest.approx(11.0) and in_flight == 0
