"""A tournament's prices: the YAML's `prices:`, then configs/prices.yaml, then genai-prices.

`genai-prices` (maintained by pydantic, updated with each release) knows the
current prices of the OpenAI, Anthropic and Google models and of the
OpenAI-compatible services it recognises by their URL (OpenRouter, Groq,
Together, ...). `configs/prices.yaml` and a tournament's `prices:` override it
or add models it does not know. Dated model ids resolve to their model: the
library does it itself, and an override for `gpt-4o-mini` also prices
`gpt-4o-mini-2024-07-18`. An OpenAI-compatible server the library does not
recognise by its URL (a local vLLM, Ollama or llama.cpp, the fake server) is
priced by the model id alone when the library knows it (`gpt-5` served by a
proxy costs what it costs at OpenAI: a budget errs on the safe side); other
models there have no price unless one is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from arena.config import (
    CONFIGS_DIR,
    ConfigError,
    PriceConfig,
    ProviderConfig,
    Tournament,
    read_yaml,
)
from arena.scheduler._budget import PriceTable, TokenPrices

DEFAULT_PRICES_FILE = CONFIGS_DIR / "prices.yaml"

# A release date at the end of a model id: -2024-07-18, -20241022, @20241022, -0613.
_DATED_RE = re.compile(
    r"(?:[-@](?:19|20)\d{2}-?(?:0[1-9]|1[0-2])-?(?:0[1-9]|[12]\d|3[01])"
    r"|-(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))$"
)
# The genai-prices provider of each provider type that has one fixed API.
_LIBRARY_PROVIDER = {"anthropic": "anthropic", "gemini": "google"}


@dataclass(frozen=True)
class ModelPrice:
    """A model's price (USD per million tokens) and where it comes from.

    `cache_read` / `cache_write`: prompt-cache input (None: as input);
    `batch`: the batch API's prices (None: no batch discount known).
    """

    input: float
    output: float
    source: str  # "prices:" | "configs/prices.yaml" | "genai-prices X.Y.Z"
    cache_read: float | None = None
    cache_write: float | None = None
    batch: TokenPrices | None = None

    def token_prices(self) -> TokenPrices:
        """These prices as the scheduler's `TokenPrices`."""
        return TokenPrices(self.input, self.output, self.cache_read, self.cache_write, self.batch)

    @classmethod
    def from_config(cls, price: PriceConfig, source: str) -> ModelPrice:
        """A `prices:` entry (tournament YAML or configs/prices.yaml)."""
        batch = price.batch
        return cls(
            price.input,
            price.output,
            source,
            price.cache_read,
            price.cache_write,
            None
            if batch is None
            else TokenPrices(batch.input, batch.output, batch.cache_read, batch.cache_write),
        )


def undated(model_id: str) -> str:
    """A model id without its release date (`gpt-4o-mini-2024-07-18` -> `gpt-4o-mini`)."""
    return _DATED_RE.sub("", model_id)


def load_price_file(path: Path = DEFAULT_PRICES_FILE) -> dict[str, tuple[float, float]]:
    """Model id -> (input, output) USD per million tokens from a prices YAML."""
    return {m: (p.input, p.output) for m, p in load_price_configs(path).items()}


def load_price_configs(path: Path = DEFAULT_PRICES_FILE) -> dict[str, PriceConfig]:
    """Model id -> its full price entry (cache and batch prices too) from a prices YAML."""
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
    prices: dict[str, PriceConfig] = {}
    for model, entry in models.items():
        try:
            price = PriceConfig.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in (f"models.{model}", *err["loc"]))
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ConfigError(path, where, msg) from None
        prices[str(model)] = price
    return prices


def library_price(model_id: str, provider_type: str, base_url: str | None) -> ModelPrice | None:
    """The genai-prices price of a model on a provider type (None: unknown there)."""
    hint: dict[str, Any]
    hints: list[dict[str, Any]]
    if provider_type == "openai":
        official = base_url is None or urlsplit(base_url).hostname == "api.openai.com"
        # Another server: the services the library knows by URL, else the model id alone.
        hints = [{"provider_id": "openai"}] if official else [{"provider_api_url": base_url}, {}]
    elif provider_type in _LIBRARY_PROVIDER:
        hints = [{"provider_id": _LIBRARY_PROVIDER[provider_type]}]
    else:
        return None
    import genai_prices  # 1.6 MB of price data: loaded only when a real model needs a price

    for hint in hints:
        try:
            standard = _library_rates(model_id, hint, None)
            batch = _library_rates(model_id, hint, {"processing": "batch"})
        except (LookupError, ValueError):
            continue
        return ModelPrice(
            standard.input,
            standard.output,
            f"genai-prices {genai_prices.__version__}",
            standard.cache_read,
            standard.cache_write,
            batch if batch != standard else None,
        )
    return None


def _library_rates(
    model_id: str, hint: Mapping[str, Any], context: Mapping[str, str] | None
) -> TokenPrices:
    """Per-million prices of a model from genai-prices, read off small usages (no
    long-context tier applies); a cache price the library lacks is None."""
    import genai_prices

    def priced(**tokens: int) -> Any:
        usage = genai_prices.Usage(**tokens)
        return genai_prices.calc_price(usage, model_id, price_context=context, **hint)

    def per_million(value: Any) -> float:
        return round(float(value) * 1000, 9)  # the library's Decimal, per 1000 tokens

    calc = priced(input_tokens=1000, output_tokens=1000)
    price_in, price_out = per_million(calc.input_price), per_million(calc.output_price)
    cache_read = cache_write = None
    if getattr(calc.model_price, "cache_read_mtok", None) is not None:
        cache_read = per_million(priced(input_tokens=1000, cache_read_tokens=1000).input_price)
    if getattr(calc.model_price, "cache_write_mtok", None) is not None:
        cache_write = per_million(priced(input_tokens=1000, cache_write_tokens=1000).input_price)
    return TokenPrices(price_in, price_out, cache_read, cache_write)


def model_prices(
    models: Iterable[tuple[str, ProviderConfig]],
    own: Mapping[str, PriceConfig] | None = None,
    path: Path = DEFAULT_PRICES_FILE,
) -> dict[str, ModelPrice]:
    """Prices by provider-side model id for `models` ((model id, its provider) pairs).

    The overrides (`own`, a YAML's `prices:`, over configs/prices.yaml) for any
    id, sim models included; then, for each model of a real provider not
    priced yet, its undated id's override or the library's price.
    """
    shipped = load_price_configs(path).items()
    prices = {m: ModelPrice.from_config(p, "configs/prices.yaml") for m, p in shipped}
    prices.update({m: ModelPrice.from_config(p, "prices:") for m, p in (own or {}).items()})
    for model_id, provider in models:
        if model_id in prices or provider.type == "sim":
            continue
        base = undated(model_id)
        found = prices.get(base) or library_price(model_id, provider.type, provider.base_url)
        if found is not None:
            prices[model_id] = found
    return prices


def resolve_prices(t: Tournament, path: Path = DEFAULT_PRICES_FILE) -> dict[str, ModelPrice]:
    """Every price the tournament can use, by provider-side model id (see `model_prices`)."""
    used = [(t.provider_model_id(n), t.config.providers[t.provider_of(n)]) for n in t.used_models()]
    return model_prices(used, t.config.prices, path)


def price_table(t: Tournament, path: Path = DEFAULT_PRICES_FILE) -> PriceTable:
    """The tournament's prices (see `resolve_prices`) as the scheduler's table.

    The models of providers in batch mode are priced at the batch API's prices.
    """
    table = as_table(resolve_prices(t, path))
    batched = [
        name
        for m in t.used_models()  # models answering from a file have no provider
        if t.config.providers[t.provider_of(m)].batch_mode() is not None
        for name in (m, t.provider_model_id(m))
    ]
    return table.batched(batched) if batched else table


def as_table(prices: Mapping[str, ModelPrice]) -> PriceTable:
    """Resolved prices as the scheduler's table."""
    return PriceTable({m: p.token_prices() for m, p in prices.items()})
