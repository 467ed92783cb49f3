"""Cache and batch prices: genai-prices' own, `prices:` overrides, and what a usage costs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arena.config import ConfigError, load_tournament
from arena.scheduler import PriceTable, TokenPrices, price_table, resolve_prices
from arena.types import ErrorKind, Usage
from tests.scheduler.test_prices import _with_models


def test_library_gives_cache_and_batch_prices(tmp_path: Path) -> None:
    path = _with_models(
        tmp_path,
        {
            "mini": {"provider": "oa", "model": "gpt-4o-mini"},
            "sonnet": {"provider": "claude", "model": "claude-sonnet-4-5"},
        },
    )
    prices = resolve_prices(load_tournament(path), tmp_path / "none.yaml")
    mini, sonnet = prices["gpt-4o-mini"], prices["claude-sonnet-4-5"]
    # OpenAI: cached input at half price here, no write surcharge; batch halves the rest.
    assert mini.cache_read == pytest.approx(mini.input / 2) and mini.cache_write is None
    assert mini.batch is not None and mini.batch.input == pytest.approx(mini.input / 2)
    # Anthropic: reads at 0.1x, writes at 1.25x; the batch API halves all four.
    assert sonnet.cache_read == pytest.approx(sonnet.input * 0.1)
    assert sonnet.cache_write == pytest.approx(sonnet.input * 1.25)
    assert sonnet.batch is not None
    assert sonnet.batch.cache_write == pytest.approx(sonnet.input * 1.25 / 2)


def test_prices_section_overrides_cache_and_batch(tmp_path: Path) -> None:
    path = _with_models(
        tmp_path,
        {"own": {"provider": "local", "model": "my-model"}},
        prices={
            "my-model": {
                "input": 1.0,
                "output": 4.0,
                "cache_read": 0.1,
                "cache_write": 1.25,
                "batch": {"input": 0.5, "output": 2.0},
            }
        },
    )
    t = load_tournament(path)
    table = price_table(t, tmp_path / "none.yaml")
    usage = Usage(2_000_000, 1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=500_000)
    # plain 0.5M x 1 + read 1M x 0.1 + write 0.5M x 1.25 + out 1M x 4
    assert table.cost("my-model", usage) == pytest.approx(0.5 + 0.1 + 0.625 + 4.0)
    # batch prices without batch cache prices: cache tokens at the batch input price
    assert table.cost("my-model", usage, batch=True) == pytest.approx(2 * 0.5 + 2.0)
    assert table.batched().cost("my-model", usage) == table.cost("my-model", usage, batch=True)
    assert table.batched(["other"]).cost("my-model", usage) == table.cost("my-model", usage)
    assert table["my-model"] == (1.0, 4.0)


def test_bad_cache_price_names_file_and_field(tmp_path: Path) -> None:
    path = _with_models(
        tmp_path,
        {},
        prices={"x": {"input": 1.0, "output": 1.0, "cache_read": -1}},
    )
    with pytest.raises(ConfigError, match=r"prices\.x\.cache_read"):
        load_tournament(path)
    data = yaml.safe_load(path.read_text())
    data["prices"] = {"x": {"input": 1.0, "output": 1.0, "batch": {"input": 1.0}}}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"prices\.x\.batch\.output"):
        load_tournament(path)


def test_usage_without_cache_counts_costs_as_before() -> None:
    table = PriceTable({"m": (2.0, 8.0)})
    assert table.cost("m", Usage(1000, 500)) == pytest.approx((2000 + 4000) / 1e6)
    rates = TokenPrices(2.0, 8.0, cache_read=0.2)
    cached = Usage(1000, 500, cache_read_tokens=1000)
    assert rates.cost(cached) == pytest.approx((200 + 4000) / 1e6)
    with pytest.raises(ValueError):
        TokenPrices(1.0, -1.0)


def test_usages_add_their_cache_and_reasoning_counts() -> None:
    a = Usage(10, 5, cache_read_tokens=4)
    b = Usage(20, 7, reasoning_tokens=3, estimated=True)
    total = a + b
    assert (total.input_tokens, total.output_tokens, total.estimated) == (30, 12, True)
    assert (total.cache_read_tokens, total.cache_write_tokens, total.reasoning_tokens) == (
        4,
        None,
        3,
    )


def test_the_scheduler_keeps_cache_counts_over_attempts_and_prices_them() -> None:
    import asyncio

    from arena.config import RetryConfig
    from arena.scheduler import Scheduler
    from arena.types import GenerateResult, Limits, ProviderError

    from ._support import FakeProvider, request, run_virtual

    empty = ProviderError(ErrorKind.TRANSIENT, "empty response", status=200)
    empty.usage = Usage(1000, 10, cache_read_tokens=900)  # billed although unusable
    cached = GenerateResult("fine", Usage(1000, 20, cache_read_tokens=900, reasoning_tokens=5))
    prices = PriceTable({"m": TokenPrices(1.0, 2.0, cache_read=0.1)})

    async def main() -> None:
        sched = Scheduler(
            {"p": FakeProvider([empty, cached])},
            {"p": Limits()},
            RetryConfig(backoff_base=0.0),
            prices=prices,
            clock=asyncio.get_running_loop().time,
        )
        outcome = await sched.call("p", request())
        assert outcome.ok and outcome.attempts == 2
        assert outcome.usage.cache_read_tokens == 1800 and outcome.usage.reasoning_tokens == 5
        # Each attempt: 100 plain input x 1 + 900 cached x 0.1, plus the output x 2.
        assert outcome.cost_usd == pytest.approx((2 * (100 + 90) + 2 * (10 + 20)) / 1e6)

    run_virtual(main)
