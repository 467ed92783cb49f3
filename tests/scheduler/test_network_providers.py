"""Providers over the network: the first attempt runs alone, bursts are half a second."""

from __future__ import annotations

import asyncio
import random

import pytest

from arena.config import RetryConfig
from arena.scheduler import Governor, Scheduler
from arena.types import ErrorKind, Limits, ProviderError

from ._support import FakeProvider, now, request, run_virtual


class NetworkProvider(FakeProvider):
    """A scripted provider that says its calls cross the network."""

    over_network = True


def _governor(**kwargs: object) -> Governor:
    loop = asyncio.get_running_loop()
    return Governor(Limits(max_concurrency=4), clock=loop.time, **kwargs)  # type: ignore[arg-type]


def test_probe_first_admits_the_rest_after_the_first_attempt() -> None:
    async def main() -> list[float]:
        gov = _governor(probe_first=True)
        times: list[float] = []

        async def one() -> None:
            permit = await gov.acquire(1)
            times.append(now())
            await asyncio.sleep(1.0)
            gov.settle(permit, 1)

        await asyncio.gather(*(one() for _ in range(5)))
        return times

    # One alone, then the concurrency limit of 4.
    assert run_virtual(main) == pytest.approx([0, 1, 1, 1, 1])


def test_a_probe_that_was_never_sent_does_not_open_the_gate() -> None:
    async def main() -> tuple[int, int]:
        gov = _governor(probe_first=True)
        first = await gov.acquire(1)
        gov.settle(first, 0, sent=False)  # e.g. refused by the budget
        second = await gov.acquire(1)
        third = asyncio.ensure_future(gov.acquire(1))
        await asyncio.sleep(0.1)
        in_flight_while_probing = gov.in_flight
        gov.settle(second, 1)
        await third
        return in_flight_while_probing, gov.in_flight

    assert run_virtual(main) == (1, 1)


def test_burst_seconds_sizes_the_buckets_not_the_rate() -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        gov = Governor(Limits(rpm=240), clock=loop.time, burst_seconds=0.5)  # 4/s, bursts of 2
        times: list[float] = []

        async def one() -> None:
            await gov.acquire(1)
            times.append(now())

        await asyncio.gather(*(one() for _ in range(6)))
        return times

    assert run_virtual(main) == pytest.approx([0, 0, 0.25, 0.5, 0.75, 1.0])


def test_bad_burst_seconds_is_rejected() -> None:
    with pytest.raises(ValueError, match="burst_seconds"):
        Governor(Limits(rpm=60), burst_seconds=0)


def test_scheduler_probes_network_providers_so_a_wrong_key_costs_one_request() -> None:
    async def main() -> None:
        bad = NetworkProvider(
            [ProviderError(ErrorKind.AUTH, "invalid x-api-key", status=401)], latency=1.0
        )
        loop = asyncio.get_running_loop()
        sched = Scheduler(
            {"bad": bad},
            {"bad": Limits(max_concurrency=10, rpm=600)},
            RetryConfig(),
            clock=loop.time,
            rng=random.Random(1),
        )
        outcomes = await asyncio.gather(*(sched.call("bad", request()) for _ in range(10)))
        assert bad.calls == 1
        assert all(o.status == "failed" and o.error_kind is ErrorKind.AUTH for o in outcomes)
        # Half-second bursts: a bucket of 5 requests at 10/s (full again after 1 s).
        assert sched.governor("bad").requests_available == pytest.approx(5.0)

    run_virtual(main)
