"""The scheduler: limits, retries, backoff, auth stop, deferral, stop()."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping

import pytest

from arena.config import RetryConfig
from arena.providers import Provider
from arena.scheduler import CallOutcome, Scheduler
from arena.scheduler._scheduler import MAX_INTERNAL_ERRORS
from arena.types import ErrorKind, GenerateResult, Limits, ProviderError

from ._support import (
    FakeProvider,
    MaxJitter,
    now,
    ok,
    rate_limited,
    request,
    run_virtual,
    transient,
)

RETRY = RetryConfig(max_attempts=4, backoff_base=1.0, backoff_max=8.0)


def _scheduler(
    providers: Mapping[str, Provider],
    limits: Mapping[str, Limits] | None = None,
    retry: RetryConfig = RETRY,
    rng: random.Random | None = None,
    **kwargs: object,
) -> Scheduler:
    loop = asyncio.get_running_loop()
    return Scheduler(
        dict(providers),
        dict(limits or {}),
        retry,
        clock=loop.time,
        rng=rng or random.Random(7),
        **kwargs,  # type: ignore[arg-type]
    )


async def _calls(sched: Scheduler, n: int, provider: str = "p") -> list[CallOutcome]:
    return await asyncio.gather(*(sched.call(provider, request()) for _ in range(n)))


def test_concurrency_never_exceeds_the_limit() -> None:
    async def main() -> None:
        fake = FakeProvider(latency=1.0)
        sched = _scheduler({"p": fake}, {"p": Limits(max_concurrency=4)})
        outcomes = await _calls(sched, 50)
        assert all(o.status == "ok" and o.attempts == 1 for o in outcomes)
        assert fake.peak == 4 and fake.calls == 50
        assert now() == pytest.approx(13.0)  # ceil(50 / 4) rounds of 1 s

    run_virtual(main)


def test_rpm_is_respected() -> None:
    async def main() -> None:
        fake = FakeProvider()
        sched = _scheduler({"p": fake}, {"p": Limits(rpm=120)})  # 2/s, bucket of 2
        await _calls(sched, 6)
        assert fake.started == pytest.approx([0, 0, 0.5, 1.0, 1.5, 2.0])

    run_virtual(main)


def test_tpm_reserves_the_estimate_and_settles_real_usage() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ok(input_tokens=10, output_tokens=10), latency=1.0)
        sched = _scheduler({"p": fake}, {"p": Limits(tpm=6000)})  # 100/s, bucket of 100
        gov = sched.governor("p")
        req = request(prompt_chars=40, max_tokens=50)  # reserves 10 + 50 = 60
        first = asyncio.ensure_future(sched.call("p", req))
        await asyncio.sleep(0)
        assert gov.tokens_available == pytest.approx(40)
        await first  # used 20 of 60: 40 refunded, and 1 s of refill
        assert gov.tokens_available == pytest.approx(100)
        await asyncio.gather(*(sched.call("p", req) for _ in range(3)))
        # 60 at t=1, then the next needs 20 more tokens (0.2 s), then 0.6 s.
        assert fake.started[1:] == pytest.approx([1.0, 1.2, 1.8])

    run_virtual(main)


def test_retry_after_pauses_the_whole_provider() -> None:
    async def main() -> None:
        fake = FakeProvider([rate_limited(retry_after=5.0)])
        sched = _scheduler({"p": fake}, {"p": Limits(max_concurrency=10)})
        first = asyncio.ensure_future(sched.call("p", request()))
        await asyncio.sleep(1.0)
        others = await _calls(sched, 3)
        outcome = await first
        assert outcome.status == "ok" and outcome.attempts == 2
        assert all(o.status == "ok" and o.attempts == 1 for o in others)
        assert fake.started[0] == 0.0
        assert min(fake.started[1:]) == pytest.approx(5.0)

    run_virtual(main)


def test_retry_after_holds_a_call_waiting_for_the_freed_slot() -> None:
    async def main() -> None:
        fake = FakeProvider([rate_limited(retry_after=5.0)], latency=1.0)
        sched = _scheduler({"p": fake}, {"p": Limits(max_concurrency=1)})
        outcomes = await _calls(sched, 2)
        assert [o.status for o in outcomes] == ["ok", "ok"]
        # The 429 came back at t=1 with a 5 s hint: nothing starts before t=6.
        assert fake.started == pytest.approx([0.0, 6.0, 7.0])

    run_virtual(main)


def test_rate_limit_without_hint_uses_exponential_pause_then_fails() -> None:
    async def main() -> None:
        fake = FakeProvider(default=rate_limited())
        sched = _scheduler({"p": fake}, retry=RETRY)
        outcome = await sched.call("p", request())
        assert outcome.status == "failed" and outcome.error_kind is ErrorKind.RATE_LIMIT
        assert outcome.attempts == 4 and fake.calls == 4
        assert fake.started == pytest.approx([0, 1, 3, 7])  # pauses of 1, 2, 4 s

    run_virtual(main)


def test_transient_is_retried_then_succeeds() -> None:
    async def main() -> None:
        fake = FakeProvider([transient(), transient()], latency=0.5)
        sched = _scheduler({"p": fake})
        outcome = await sched.call("p", request())
        assert outcome.status == "ok" and outcome.attempts == 3
        assert outcome.error is None and outcome.result is not None
        assert outcome.latency_s == pytest.approx(0.5)
        # Full jitter: each backoff is within [0, base * 2**(attempt-1)].
        gaps = [b - a - 0.5 for a, b in zip(fake.started, fake.started[1:], strict=False)]
        assert 0 <= gaps[0] <= 1.0 and 0 <= gaps[1] <= 2.0

    run_virtual(main)


def test_transient_exhausted_fails_with_the_last_error() -> None:
    async def main() -> None:
        fake = FakeProvider([transient("first"), transient("second")], default=transient("last"))
        sched = _scheduler({"p": fake})
        outcome = await sched.call("p", request())
        assert outcome.status == "failed" and outcome.error_kind is ErrorKind.TRANSIENT
        assert outcome.attempts == RETRY.max_attempts == fake.calls
        assert outcome.error is not None and "last" in outcome.error and "503" in outcome.error
        assert outcome.result is None and outcome.cost_usd == 0

    run_virtual(main)


def test_backoff_uses_the_injected_sleep() -> None:
    slept: list[float] = []
    clock = [0.0]

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    async def main() -> CallOutcome:
        fake = FakeProvider([transient(), transient()])
        sched = Scheduler(
            {"p": fake},
            {},
            RetryConfig(max_attempts=3, backoff_base=2.0, backoff_max=3.0),
            clock=lambda: clock[0],
            sleep=fake_sleep,
            rng=random.Random(1),
        )
        return await sched.call("p", request())

    outcome = asyncio.run(main())
    assert outcome.status == "ok" and len(slept) == 2
    assert 0 <= slept[0] <= 2.0 and 0 <= slept[1] <= 3.0


def test_an_unexpected_exception_fails_its_call_at_once_with_its_traceback() -> None:
    async def main() -> None:
        fake = FakeProvider(default=KeyError("choices"))
        sched = _scheduler({"p": fake}, retry=RetryConfig(max_attempts=5, backoff_base=0))
        outcome = await sched.call("p", request())
        assert outcome.status == "failed" and outcome.attempts == 1 and fake.calls == 1
        assert outcome.error is not None and outcome.error.startswith("internal error: KeyError")
        assert "Traceback" in outcome.error and "in generate" in outcome.error
        assert sched.internal_errors == 1 and not sched.stopped

    run_virtual(main)


def test_the_run_stops_after_a_few_unexpected_exceptions() -> None:
    async def main() -> None:
        fake = FakeProvider(default=TypeError("bug"))
        sched = _scheduler({"p": fake}, retry=RetryConfig(max_attempts=5, backoff_base=0))
        outcomes = [await sched.call("p", request()) for _ in range(MAX_INTERNAL_ERRORS + 2)]
        assert [o.status for o in outcomes[:MAX_INTERNAL_ERRORS]] == ["failed"] * 3
        assert [o.status for o in outcomes[MAX_INTERNAL_ERRORS:]] == ["stopped"] * 2
        assert fake.calls == MAX_INTERNAL_ERRORS and sched.stopped
        assert (
            sched.stopped_by_errors is not None and "3 unexpected errors" in sched.stopped_by_errors
        )

    run_virtual(main)


def test_network_and_sdk_exceptions_are_still_retried() -> None:
    async def main() -> None:
        for error in (ConnectionResetError("reset"), TimeoutError(), _SdkError("boom")):
            fake = FakeProvider(default=error)
            sched = _scheduler({"p": fake}, retry=RetryConfig(max_attempts=3, backoff_base=0))
            outcome = await sched.call("p", request())
            assert outcome.status == "failed" and outcome.attempts == 3, error
            assert outcome.error_kind is ErrorKind.TRANSIENT and sched.internal_errors == 0

    run_virtual(main)


# An SDK's own exception class (as an SDK provider may let one through unclassified).
_SdkError = type("APIStatusError", (Exception,), {"__module__": "openai._exceptions"})


def test_permanent_fails_at_once() -> None:
    async def main() -> None:
        error = ProviderError(ErrorKind.PERMANENT, "context too long", status=400)
        fake = FakeProvider([error])
        sched = _scheduler({"p": fake})
        outcome = await sched.call("p", request())
        assert outcome.status == "failed" and outcome.attempts == 1 and fake.calls == 1
        assert outcome.error_kind is ErrorKind.PERMANENT
        assert outcome.error is not None and "context too long" in outcome.error
        assert (await sched.call("p", request())).status == "ok"  # the provider lives on

    run_virtual(main)


def test_auth_failure_stops_the_provider_with_one_message() -> None:
    async def main() -> None:
        bad = FakeProvider(
            [ProviderError(ErrorKind.AUTH, "invalid x-api-key", status=401)], latency=1.0
        )
        good = FakeProvider()
        sched = _scheduler({"bad": bad, "good": good}, {"bad": Limits(max_concurrency=1)})
        outcomes = await _calls(sched, 5, "bad")  # four wait behind the first
        later = await _calls(sched, 5, "bad")
        assert bad.calls == 1
        messages = {o.error for o in outcomes + later}
        assert messages == {
            "provider bad: authentication failed: invalid x-api-key; remaining calls skipped"
        }
        assert all(o.status == "failed" and o.error_kind is ErrorKind.AUTH for o in later)
        assert [o.attempts for o in outcomes] == [1, 0, 0, 0, 0]
        assert now() == pytest.approx(1.0)
        assert sched.dead_providers == {"bad": messages.pop()}
        assert (await sched.call("good", request())).status == "ok"

    run_virtual(main)


def test_long_retry_hint_defers_that_and_later_calls() -> None:
    async def main() -> None:
        quota = FakeProvider([rate_limited(retry_after=3600.0)], latency=1.0)
        other = FakeProvider()
        sched = _scheduler(
            {"q": quota, "o": other}, {"q": Limits(max_concurrency=1)}, max_retry_after=60.0
        )
        outcomes = await _calls(sched, 3, "q")
        later = await sched.call("q", request())
        assert [o.status for o in outcomes] == ["deferred"] * 3
        assert later.status == "deferred" and later.attempts == 0
        assert outcomes[0].attempts == 1 and quota.calls == 1
        assert later.error is not None and "3600" in later.error
        assert "q" in sched.deferred_providers
        assert (await sched.call("o", request())).status == "ok"
        assert now() == pytest.approx(1.0)

    run_virtual(main)


def test_adaptive_rate_through_the_scheduler() -> None:
    async def main() -> None:
        fake = FakeProvider([rate_limited(0.5)] * 3, latency=1.0)
        sched = _scheduler({"p": fake}, {"p": Limits(rpm=600)})
        outcomes = await _calls(sched, 3)  # three 429s in one episode
        assert all(o.status == "ok" for o in outcomes)
        gov = sched.governor("p")
        assert gov.effective_rpm == pytest.approx(420)
        await _calls(sched, 47)  # 50 successes in all
        assert gov.effective_rpm == pytest.approx(450)

    run_virtual(main)


def test_header_resync_through_the_scheduler() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ok(headers={"x-ratelimit-remaining-requests": "0"}))
        sched = _scheduler({"p": fake}, {"p": Limits(rpm=600)})  # bucket of 10
        await _calls(sched, 3)
        # Each response says nothing remains: one call per refill (0.1 s).
        assert fake.started == pytest.approx([0.0, 0.1, 0.2])

    run_virtual(main)


def test_stop_releases_waiters_promptly() -> None:
    async def main() -> None:
        slow = FakeProvider(latency=100.0)
        flaky = FakeProvider(default=transient())
        sched = _scheduler(
            {"slow": slow, "flaky": flaky},
            {"slow": Limits(max_concurrency=1)},
            retry=RetryConfig(max_attempts=5, backoff_base=50, backoff_max=50),
            rng=MaxJitter(),
        )
        loop = asyncio.get_running_loop()
        loop.call_later(1.0, sched.stop)
        tasks = [asyncio.ensure_future(sched.call("slow", request())) for _ in range(4)]
        in_backoff = asyncio.ensure_future(sched.call("flaky", request()))

        waiting = await asyncio.gather(*tasks[1:], in_backoff)
        assert now() == pytest.approx(1.0)
        assert all(o.status == "stopped" for o in waiting)
        assert [o.attempts for o in waiting] == [0, 0, 0, 1]

        in_flight = await tasks[0]  # allowed to finish
        assert in_flight.status == "ok" and now() == pytest.approx(100.0)
        after = await sched.call("slow", request())
        assert after.status == "stopped" and after.attempts == 0
        assert slow.calls == 1 and flaky.calls == 1 and sched.stopped

    run_virtual(main)


def test_backoff_doubles_up_to_the_cap() -> None:
    async def main() -> None:
        fake = FakeProvider(default=transient())
        retry = RetryConfig(max_attempts=5, backoff_base=1.0, backoff_max=3.0)
        sched = _scheduler({"p": fake}, retry=retry, rng=MaxJitter())
        outcome = await sched.call("p", request())
        assert outcome.status == "failed" and outcome.attempts == 5
        assert fake.started == pytest.approx([0, 1, 3, 6, 9])

    run_virtual(main)


def test_no_attempt_starts_after_stop_even_if_already_admitted() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        sched: Scheduler

        def answer_then_stop(_: object) -> GenerateResult:
            # Stop lands between the release of this call's slot and the moment
            # the next, already admitted, call would resume.
            loop.call_soon(loop.call_soon, sched.stop)
            return ok()

        fake = FakeProvider([answer_then_stop], latency=1.0)
        sched = _scheduler({"p": fake}, {"p": Limits(max_concurrency=1)})
        first, second = await _calls(sched, 2)
        assert first.status == "ok" and second.status == "stopped"
        assert second.attempts == 0 and fake.calls == 1

    run_virtual(main)


def test_outcome_times_and_latency() -> None:
    async def main() -> None:
        fake = FakeProvider([transient()], latency=2.0)
        sched = _scheduler({"p": fake}, retry=RetryConfig(backoff_base=0.0))
        outcome = await sched.call("p", request())
        assert outcome.latency_s == pytest.approx(2.0)  # the last attempt only
        assert outcome.finished_at - outcome.started_at == pytest.approx(4.0)
        assert outcome.started_at > 1e9  # epoch seconds

    run_virtual(main)


def test_unknown_provider_is_a_clear_error() -> None:
    async def main() -> None:
        sched = _scheduler({"p": FakeProvider()})
        with pytest.raises(KeyError, match="unknown provider 'nope'"):
            await sched.call("nope", request())

    run_virtual(main)


def test_error_text_never_contains_request_headers() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ProviderError(ErrorKind.PERMANENT, "bad request"))
        sched = _scheduler({"p": fake})
        outcome = await sched.call("p", request())
        assert outcome.error == "permanent: bad request"

    run_virtual(main)
