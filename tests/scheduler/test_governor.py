"""The governor: concurrency, request and token buckets, pauses, adaptive rate."""

from __future__ import annotations

import asyncio

import pytest

from arena.scheduler import Governor, GovernorClosed, Permit
from arena.types import Limits

from ._support import now, run_virtual


def _governor(**limits: float) -> Governor:
    loop = asyncio.get_running_loop()
    return Governor(Limits(**limits), clock=loop.time)  # type: ignore[arg-type]


def test_requests_per_minute_admits_at_the_refill_times() -> None:
    async def main() -> list[float]:
        gov = _governor(rpm=60)  # 1/s, bucket of one request
        times: list[float] = []

        async def one() -> None:
            permit = await gov.acquire(1)
            times.append(now())
            gov.settle(permit, 1)

        await asyncio.gather(*(one() for _ in range(5)))
        return times

    assert run_virtual(main) == pytest.approx([0, 1, 2, 3, 4])


def test_bucket_holds_one_second_of_refill() -> None:
    async def main() -> list[float]:
        gov = _governor(rpm=240)  # 4/s: bursts of 4, then one every 0.25 s
        times: list[float] = []

        async def one() -> None:
            await gov.acquire(1)
            times.append(now())

        await asyncio.gather(*(one() for _ in range(8)))
        return times

    assert run_virtual(main) == pytest.approx([0, 0, 0, 0, 0.25, 0.5, 0.75, 1.0])


def test_steady_throughput_equals_the_configured_rate() -> None:
    async def main() -> float:
        gov = _governor(rpm=600)  # 10/s, bucket of 10
        await asyncio.gather(*(gov.acquire(1) for _ in range(1010)))
        return now()

    # 10 in the first burst, then 1000 more at exactly 10 per second.
    assert run_virtual(main) == pytest.approx(100.0)


def test_admission_is_fifo() -> None:
    async def main() -> list[int]:
        gov = _governor(rpm=60, max_concurrency=2)
        order: list[int] = []

        async def one(i: int) -> None:
            permit = await gov.acquire(1)
            order.append(i)
            await asyncio.sleep(0.5)
            gov.settle(permit, 1)

        await asyncio.gather(*(one(i) for i in range(20)))
        return order

    assert run_virtual(main) == list(range(20))


def test_concurrency_limit_and_release() -> None:
    async def main() -> None:
        gov = _governor(max_concurrency=2)
        a = await gov.acquire(1)
        await gov.acquire(1)
        third = asyncio.ensure_future(gov.acquire(1))
        await asyncio.sleep(1)
        assert not third.done() and gov.in_flight == 2
        gov.settle(a, 1)
        gov.settle(a, 1)  # settling twice is harmless
        assert isinstance(await third, Permit)
        assert gov.in_flight == 2 and now() == 1

    run_virtual(main)


def test_token_reservation_and_settle_refund() -> None:
    async def main() -> None:
        gov = _governor(tpm=600)  # 10 tokens/s, bucket of 10
        permit = await gov.acquire(8)
        assert gov.tokens_available == pytest.approx(2)
        gov.settle(permit, 3)  # used 3 of the 8 reserved: 5 come back
        assert gov.tokens_available == pytest.approx(7)

        big = await gov.acquire(9)  # needs 2 more tokens: 0.2 s
        assert now() == pytest.approx(0.2)
        gov.settle(big, 12)  # charged 3 more than reserved
        assert gov.tokens_available == pytest.approx(-3)
        await gov.acquire(1)  # waits out the debt
        assert now() == pytest.approx(0.6)

    run_virtual(main)


def test_oversized_reservation_is_clipped_so_it_can_proceed() -> None:
    async def main() -> None:
        gov = _governor(tpm=600)  # bucket of 10
        permit = await gov.acquire(1000)
        assert permit.tokens == 10 and now() == 0
        gov.settle(permit, 30)  # real usage is charged in full
        await gov.acquire(5)
        assert now() == pytest.approx(2.5)

    run_virtual(main)


def test_refund_admits_a_waiter_early() -> None:
    async def main() -> None:
        gov = _governor(tpm=6000)  # 100 tokens/s, bucket of 100
        p = await gov.acquire(100)
        waiter = asyncio.ensure_future(gov.acquire(100))
        await asyncio.sleep(0.1)
        assert not waiter.done()
        gov.settle(p, 10)  # 90 refunded + 10 refilled: enough now
        await waiter
        assert now() == pytest.approx(0.1)

    run_virtual(main)


def test_pause_holds_every_call() -> None:
    async def main() -> list[float]:
        gov = _governor(max_concurrency=10)
        gov.pause(5)
        gov.pause(2)  # pauses only extend
        times: list[float] = []

        async def one() -> None:
            await gov.acquire(1)
            times.append(now())

        await asyncio.gather(*(one() for _ in range(3)))
        return times

    assert run_virtual(main) == pytest.approx([5, 5, 5])


def test_adaptive_cut_once_per_episode_and_floor() -> None:
    async def main() -> None:
        gov = _governor(rpm=600, tpm=60000)
        in_flight = [await gov.acquire(1) for _ in range(3)]
        for p in in_flight:  # three 429s of calls sent together: one episode
            gov.settle(p, 0)
            gov.record_rate_limit(p, 1.0)
        assert gov.effective_rpm == pytest.approx(420)
        assert gov.effective_tpm == pytest.approx(42000)
        assert gov.paused_until == pytest.approx(1.0)

        later = await gov.acquire(1)  # sent after the episode began: a new episode
        assert now() >= 1.0
        gov.record_rate_limit(later, 1.0)
        assert gov.effective_rpm == pytest.approx(294)

        for _ in range(20):
            p = await gov.acquire(1)
            gov.record_rate_limit(p, 0.0)
        assert gov.effective_rpm == pytest.approx(30)  # floor: 5% of configured

    run_virtual(main)


def test_creep_back_after_clean_successes_never_above_configured() -> None:
    async def main() -> None:
        gov = _governor(rpm=600)
        p = await gov.acquire(1)
        gov.record_rate_limit(p, 0.0)
        assert gov.effective_rpm == pytest.approx(420)
        for _ in range(49):
            gov.record_success()
        assert gov.effective_rpm == pytest.approx(420)
        gov.record_success()
        assert gov.effective_rpm == pytest.approx(450)  # +5% of configured
        for _ in range(50 * 20):
            gov.record_success()
        assert gov.effective_rpm == pytest.approx(600)
        assert gov.rate_fraction == 1.0

    run_virtual(main)


def test_a_rate_limit_resets_the_creep_count() -> None:
    async def main() -> None:
        gov = _governor(rpm=600)
        gov.record_rate_limit(await gov.acquire(1), 0.0)
        for _ in range(40):
            gov.record_success()
        gov.record_rate_limit(await gov.acquire(1), 0.0)
        for _ in range(40):
            gov.record_success()
        assert gov.effective_rpm == pytest.approx(294)

    run_virtual(main)


def test_header_resync_lowers_the_buckets_only() -> None:
    async def main() -> None:
        gov = _governor(rpm=600, tpm=60000)  # buckets of 10 requests, 1000 tokens
        await gov.acquire(100)
        assert gov.requests_available == pytest.approx(9)
        gov.record_success({"x-ratelimit-remaining-requests": "2"})
        assert gov.requests_available == pytest.approx(2)
        gov.record_success({"x-ratelimit-remaining-requests": "500"})
        assert gov.requests_available == pytest.approx(2)

        gov.resync(
            {
                "anthropic-ratelimit-input-tokens-remaining": "300",
                "anthropic-ratelimit-output-tokens-remaining": "700",
                "anthropic-ratelimit-requests-remaining": "1",
            }
        )
        assert gov.tokens_available == pytest.approx(300)
        assert gov.requests_available == pytest.approx(1)
        gov.resync({"x-ratelimit-remaining-tokens": "not a number"})
        assert gov.tokens_available == pytest.approx(300)

        await gov.acquire(400)  # 100 more tokens at 1000/s
        assert now() == pytest.approx(0.1)

    run_virtual(main)


def test_close_releases_waiters_and_refuses_new_calls() -> None:
    async def main() -> None:
        gov = _governor(max_concurrency=1, rpm=60)
        await gov.acquire(1)
        waiters = [asyncio.ensure_future(gov.acquire(1)) for _ in range(3)]
        await asyncio.sleep(0.5)
        gov.close("stopped")
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert all(isinstance(r, GovernorClosed) for r in results)
        assert now() == 0.5
        with pytest.raises(GovernorClosed):
            await gov.acquire(1)

    run_virtual(main)


def test_sleep_is_cut_short_by_close() -> None:
    async def main() -> None:
        gov = _governor()
        assert await gov.sleep(2.0) is True
        assert now() == pytest.approx(2.0)
        asyncio.get_running_loop().call_later(1.0, gov.close, "stopped")
        assert await gov.sleep(100.0) is False
        assert now() == pytest.approx(3.0)

    run_virtual(main)


def test_cancelled_waiter_gives_its_place_up() -> None:
    async def main() -> None:
        gov = _governor(max_concurrency=1)
        first = await gov.acquire(1)
        cancelled = asyncio.ensure_future(gov.acquire(1))
        behind = asyncio.ensure_future(gov.acquire(1))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(1)
        gov.settle(first, 1)
        await behind
        assert gov.in_flight == 1 and gov.waiting == 0

    run_virtual(main)


def test_injected_sleep_drives_the_timer() -> None:
    slept: list[float] = []
    clock = [0.0]

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    async def main() -> None:
        gov = Governor(Limits(rpm=60), clock=lambda: clock[0], sleep=fake_sleep)
        await gov.acquire(1)
        await gov.acquire(1)
        await gov.acquire(1)

    asyncio.run(main())
    assert slept == pytest.approx([1.0, 1.0])


def test_invalid_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        Governor(Limits(max_concurrency=0))
    with pytest.raises(ValueError, match="rpm"):
        Governor(Limits(rpm=-1))
