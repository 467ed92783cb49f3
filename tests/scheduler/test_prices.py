"""Prices: the YAML's `prices:` over configs/prices.yaml over genai-prices; dated ids resolve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.config import load_tournament
from arena.scheduler import price_table, resolve_prices, undated
from tests.conftest import small_tournament


def _with_models(tmp: Path, models: dict[str, dict[str, Any]], **extra: Any) -> Path:
    path = small_tournament(tmp, models=2)
    data = yaml.safe_load(path.read_text())
    data["providers"].update(
        {
            "oa": {"type": "openai"},
            "claude": {"type": "anthropic", "base_url": "http://127.0.0.1:9"},
            "local": {"type": "openai", "base_url": "http://127.0.0.1:8000/v1"},
        }
    )
    data["models"].update(models)
    data["contestants"] = ["m0", "m1", *models]
    data.update(extra)
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("model_id", "base"),
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet@20241022", "claude-3-5-sonnet"),
        ("gpt-4-0613", "gpt-4"),
        ("gpt-4o", "gpt-4o"),
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("model-9999", "model-9999"),
    ],
)
def test_undated(model_id: str, base: str) -> None:
    assert undated(model_id) == base


def test_library_prices_known_models_and_dated_ids(tmp_path: Path) -> None:
    path = _with_models(
        tmp_path,
        {
            "mini": {"provider": "oa", "model": "gpt-4o-mini-2024-07-18"},
            "haiku": {"provider": "claude", "model": "claude-haiku-4-5"},
            "llama": {"provider": "local", "model": "llama3.1"},
            "proxied": {"provider": "local", "model": "gpt-5"},
        },
    )
    prices = resolve_prices(load_tournament(path), tmp_path / "none.yaml")
    mini = prices["gpt-4o-mini-2024-07-18"]
    assert (mini.input, mini.output) == pytest.approx((0.15, 0.6))
    assert mini.source.startswith("genai-prices ")
    haiku = prices["claude-haiku-4-5"]  # behind a proxy base_url: still Anthropic's price
    assert (haiku.input, haiku.output) == pytest.approx((1.0, 5.0))
    assert "llama3.1" not in prices  # a local server: unpriced unless given
    # An unknown server serving a model the library knows: priced like it (budgets err safe).
    assert prices["gpt-5"].input == pytest.approx(1.25)
    assert "m0" not in prices  # sim models are free


def test_overrides_win_and_price_dated_ids(tmp_path: Path) -> None:
    shipped = tmp_path / "prices.yaml"
    shipped.write_text(
        "models:\n  gpt-4o-mini: {input: 9, output: 9}\n  llama3.1: {input: 0.1, output: 0.2}\n"
    )
    path = _with_models(
        tmp_path,
        {
            "mini": {"provider": "oa", "model": "gpt-4o-mini-2024-07-18"},
            "llama": {"provider": "local", "model": "llama3.1"},
        },
        prices={"llama3.1": {"input": 0.0, "output": 0.5}},
    )
    t = load_tournament(path)
    prices = resolve_prices(t, shipped)
    assert prices["gpt-4o-mini-2024-07-18"].input == 9  # the override of its undated id
    assert prices["gpt-4o-mini-2024-07-18"].source == "configs/prices.yaml"
    assert prices["llama3.1"].output == 0.5 and prices["llama3.1"].source == "prices:"
    table = price_table(t, shipped)
    assert table["llama3.1"] == (0.0, 0.5)


def test_shipped_overrides_file_is_valid() -> None:
    from arena.scheduler import load_price_file

    assert isinstance(load_price_file(), dict)
