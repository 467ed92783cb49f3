"""A tournament's price table: configs/prices.yaml, overridden by its `prices:` section."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from arena.config import CONFIGS_DIR, ConfigError, PriceConfig, Tournament, read_yaml
from arena.scheduler._budget import PriceTable

DEFAULT_PRICES_FILE = CONFIGS_DIR / "prices.yaml"


def load_price_file(path: Path = DEFAULT_PRICES_FILE) -> dict[str, tuple[float, float]]:
    """Model id -> (input, output) USD per million tokens from a prices YAML."""
    if not path.is_file():
        return {}
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(path, "", "the document must be a mapping with a 'models' key")
    for key in data:
        if key not in ("as_of", "models"):
            raise ConfigError(path, str(key), "unknown key (expected: as_of, models)")
    models = data.get("models") or {}
    if not isinstance(models, dict):
        raise ConfigError(path, "models", "must map model ids to {input: USD, output: USD}")
    prices: dict[str, tuple[float, float]] = {}
    for model, entry in models.items():
        try:
            price = PriceConfig.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in (f"models.{model}", *err["loc"]))
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ConfigError(path, where, msg) from None
        prices[str(model)] = (price.input, price.output)
    return prices


def price_table(t: Tournament, path: Path = DEFAULT_PRICES_FILE) -> PriceTable:
    """The shipped prices, with the tournament's own `prices:` taking precedence."""
    prices = load_price_file(path)
    prices.update({model: (p.input, p.output) for model, p in t.config.prices.items()})
    return PriceTable(prices)
