"""Prices and the budget: worst-case reservations, actual cost, the budget stop."""

from __future__ import annotations

import asyncio

import pytest

from arena.config import RetryConfig
from arena.scheduler import Budget, PriceTable, Scheduler
from arena.types import Limits, Usage

from ._support import FakeProvider, now, ok, request, run_virtual, transient

PRICES = PriceTable({"m": (1.0, 2.0)})  # USD per million input / output tokens
REQ = request(prompt_chars=400, max_tokens=1000)  # worst case 100 in + 1000 out
WORST = (100 * 1.0 + 1000 * 2.0) / 1e6  # 0.0021
ACTUAL = (100 * 1.0 + 500 * 2.0) / 1e6  # 0.0011 with the usage the fake reports


def test_price_table_cost() -> None:
    assert PRICES.cost("m", Usage(1_000_000, 500_000)) == pytest.approx(2.0)
    assert PRICES.cost("unknown", Usage(10**9, 10**9)) == 0.0
    assert PRICES.worst_case("m", REQ) == pytest.approx(WORST)
    assert dict(PRICES) == {"m": (1.0, 2.0)}
    with pytest.raises(ValueError, match="price of model 'x'"):
        PriceTable({"x": (-1.0, 1.0)})


def test_budget_counts_reservations() -> None:
    budget = Budget(1.0)
    assert budget.try_reserve(0.6)
    assert not budget.try_reserve(0.5)  # 0.6 reserved + 0.5 > 1.0
    budget.settle(0.6, 0.2)
    assert budget.spent_usd == pytest.approx(0.2) and budget.reserved_usd == 0
    assert budget.try_reserve(0.8)  # exactly fits
    assert budget.remaining_usd == pytest.approx(0.0)
    assert Budget(None).try_reserve(1e9)
    with pytest.raises(ValueError):
        Budget(-1.0)


def _scheduler(fake: FakeProvider, budget: float | None, **limits: int) -> Scheduler:
    return Scheduler(
        {"p": fake},
        {"p": Limits(**limits)},
        RetryConfig(backoff_base=0.0),
        budget_usd=budget,
        prices=PRICES,
        clock=asyncio.get_running_loop().time,
    )


def test_budget_never_exceeded_including_in_flight_reservations() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ok(input_tokens=100, output_tokens=500), latency=1.0)
        sched = _scheduler(fake, 0.01)

        def check() -> None:
            assert sched.spent_usd + sched.reserved_usd <= 0.01 + 1e-12

        fake.on_start = check
        outcomes = await asyncio.gather(*(sched.call("p", REQ) for _ in range(20)))
        statuses = [o.status for o in outcomes]
        assert statuses.count("ok") == 4  # 4 x 0.0021 reserved fits in 0.01; 5 does not
        assert statuses.count("budget") == 16 and fake.calls == 4
        assert sched.budget_exhausted and sched.stopped
        assert sched.spent_usd == pytest.approx(4 * ACTUAL) and sched.reserved_usd == 0
        assert all(o.cost_usd == pytest.approx(ACTUAL) for o in outcomes if o.ok)
        refused = next(o for o in outcomes if o.status == "budget")
        assert refused.attempts == 0 and refused.error is not None and "budget" in refused.error

    run_virtual(main)


def test_budget_stops_sequential_calls_when_the_next_would_not_fit() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ok(input_tokens=100, output_tokens=500))
        sched = _scheduler(fake, 0.005, max_concurrency=1)
        statuses = [(await sched.call("p", REQ)).status for _ in range(6)]
        # Spent 0.0033 after three calls; 0.0033 + 0.0021 > 0.005.
        assert statuses == ["ok"] * 3 + ["budget"] * 3
        assert sched.spent_usd == pytest.approx(3 * ACTUAL) and fake.calls == 3

    run_virtual(main)


def test_budget_refusal_releases_waiting_calls() -> None:
    async def main() -> None:
        fake = FakeProvider(default=ok(input_tokens=100, output_tokens=500), latency=1.0)
        sched = _scheduler(fake, WORST * 1.5, max_concurrency=1)
        outcomes = await asyncio.gather(*(sched.call("p", REQ) for _ in range(5)))
        assert [o.status for o in outcomes] == ["ok"] + ["budget"] * 4
        assert now() == pytest.approx(1.0)

    run_virtual(main)


def test_failed_attempts_cost_nothing_and_model_key_picks_the_price() -> None:
    async def main() -> None:
        fake = FakeProvider([transient()], default=ok(input_tokens=1000, output_tokens=0))
        sched = Scheduler(
            {"p": fake},
            {},
            RetryConfig(backoff_base=0.0),
            prices=PriceTable({"judge": (3.0, 0.0)}),
            clock=asyncio.get_running_loop().time,
        )
        outcome = await sched.call("p", REQ, model_key="judge")
        assert outcome.status == "ok" and outcome.attempts == 2
        assert outcome.cost_usd == pytest.approx(0.003) == sched.spent_usd
        unpriced = await sched.call("p", REQ)  # request.model "m" has no price
        assert unpriced.cost_usd == 0.0

    run_virtual(main)


def test_billed_failures_count_toward_cost_usage_and_budget() -> None:
    async def main() -> None:
        from arena.types import ErrorKind, ProviderError

        billed_empty = ProviderError(
            ErrorKind.TRANSIENT, "empty response", status=200, usage=Usage(100, 500)
        )
        fake = FakeProvider([billed_empty], default=ok(input_tokens=100, output_tokens=500))
        sched = _scheduler(fake, 1.0)
        outcome = await sched.call("p", REQ)
        assert outcome.status == "ok" and outcome.attempts == 2
        # both attempts were billed: the empty one and the good one
        assert outcome.cost_usd == pytest.approx(2 * ACTUAL)
        assert outcome.usage == Usage(200, 1000)
        assert sched.spent_usd == pytest.approx(2 * ACTUAL)

    run_virtual(main)


def test_tournament_budget_counts_earlier_runs_and_says_how_to_continue() -> None:
    async def main() -> tuple[list[str], str]:
        fake = FakeProvider(default=ok(input_tokens=100, output_tokens=500))
        sched = Scheduler(
            {"p": fake},
            {"p": Limits(max_concurrency=1)},
            RetryConfig(backoff_base=0.0),
            budget_usd=1.0,  # the run's own limit is far away
            prices=PRICES,
            tournament_budget_usd=0.01,
            prior_spent_usd=0.0055,  # earlier runs spent this much
            clock=asyncio.get_running_loop().time,
        )
        statuses = [(await sched.call("p", REQ)).status for _ in range(4)]
        refused = await sched.call("p", REQ)
        assert refused.error is not None
        assert sched.budget.total_spent_usd == pytest.approx(0.0055 + 3 * ACTUAL)
        return statuses, refused.error

    statuses, message = run_virtual(main)
    # Each call reserves 0.0021 and costs 0.0011: 0.0055, 0.0066 and 0.0077 leave
    # room for one more; 0.0088 + 0.0021 > 0.01.
    assert statuses == ["ok", "ok", "ok", "budget"]
    assert "tournament budget (budget_usd) of $0.0100" in message
    assert "$0.0055 before this one" in message and "raise budget_usd" in message


def test_run_budget_message_names_spend_limit_and_how_to_continue() -> None:
    async def main() -> str:
        fake = FakeProvider(default=ok(input_tokens=100, output_tokens=500))
        sched = _scheduler(fake, 0.003, max_concurrency=1)
        await sched.call("p", REQ)
        refused = await sched.call("p", REQ)
        assert refused.status == "budget" and refused.error is not None
        return refused.error

    message = run_virtual(main)
    assert message.startswith("budget of $0.0030 for this run reached: spent $0.0011")
    assert "run again" in message


def test_budgets_must_be_finite_and_not_negative() -> None:
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            Budget(bad)
        with pytest.raises(ValueError):
            Budget(None, total_limit_usd=bad)
    budget = Budget(None, total_limit_usd=1.0, prior_spent_usd=0.25)
    assert budget.remaining_usd == pytest.approx(0.75) and budget.limited
