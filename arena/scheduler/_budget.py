"""Prices and the spending budget: worst-case reservations, settled with actual cost."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from arena.types import GenerateRequest, Usage, estimate_tokens

_PER_MILLION = 1_000_000.0


@dataclass(frozen=True)
class TokenPrices:
    """A model's prices, USD per million tokens: input, output and the cache's.

    `cache_read` and `cache_write` price the input tokens read from and written
    to the provider's prompt cache (None: as plain input). `batch` holds the
    prices of the provider's batch API (None: no batch discount known).
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    batch: TokenPrices | None = None

    def __post_init__(self) -> None:
        for value in (self.input, self.output, self.cache_read, self.cache_write):
            if value is not None and (value < 0 or not math.isfinite(value)):
                raise ValueError("prices must be finite and >= 0")

    def cost(self, usage: Usage) -> float:
        """USD cost of `usage` at these prices."""
        read = usage.cache_read_tokens or 0
        write = usage.cache_write_tokens or 0
        plain = max(0, usage.input_tokens - read - write)
        read_price = self.input if self.cache_read is None else self.cache_read
        write_price = self.input if self.cache_write is None else self.cache_write
        return (
            plain * self.input
            + read * read_price
            + write * write_price
            + usage.output_tokens * self.output
        ) / _PER_MILLION

    def batched(self) -> TokenPrices:
        """The prices a batch job pays (these when no batch price is known)."""
        return self.batch if self.batch is not None else self


class PriceTable(Mapping[str, tuple[float, float]]):
    """Model id -> (input USD per million tokens, output USD per million tokens).

    Each entry may be a `TokenPrices` with cache and batch prices; `rates`
    gives it. `batch=True` (or `batched()`) prices every call at the batch
    API's prices where they are known, `batch_models` only those models' calls.
    """

    def __init__(
        self,
        prices: Mapping[str, tuple[float, float] | TokenPrices] | None = None,
        *,
        batch: bool = False,
        batch_models: Iterable[str] = (),
    ) -> None:
        table: dict[str, TokenPrices] = {}
        for model, entry in (prices or {}).items():
            if isinstance(entry, TokenPrices):
                table[model] = entry
                continue
            price_in, price_out = entry
            if (
                price_in < 0
                or price_out < 0
                or not (math.isfinite(price_in) and math.isfinite(price_out))
            ):
                raise ValueError(f"price of model '{model}' must be finite and >= 0")
            table[model] = TokenPrices(float(price_in), float(price_out))
        self._rates = table
        self.batch = batch
        self.batch_models = frozenset(batch_models)

    def __getitem__(self, model: str) -> tuple[float, float]:
        rates = self._rates[model]
        return (rates.input, rates.output)

    def __iter__(self) -> Iterator[str]:
        return iter(self._rates)

    def __len__(self) -> int:
        return len(self._rates)

    def rates(self, model: str) -> TokenPrices | None:
        """A model's full prices (cache and batch ones included), or None when unpriced."""
        return self._rates.get(model)

    def batched(self, models: Iterable[str] | None = None) -> PriceTable:
        """This table pricing calls at batch prices: every model's, or only `models`'."""
        if models is None:
            return PriceTable(self._rates, batch=True)
        return PriceTable(
            self._rates, batch=self.batch, batch_models=self.batch_models | set(models)
        )

    def cost(self, model: str, usage: Usage, *, batch: bool | None = None) -> float:
        """USD cost of `usage` on `model`; an unknown model costs 0.

        Cache reads and writes are priced at the cache prices; `batch` (default:
        the table's flag for that model) at the batch API's prices.
        """
        rates = self._rates.get(model)
        if rates is None:
            return 0.0
        if batch is None:
            batch = self.batch or model in self.batch_models
        return (rates.batched() if batch else rates).cost(usage)

    def worst_case(
        self, model: str, request: GenerateRequest, *, batch: bool | None = None
    ) -> float:
        """Most a request can cost: estimated prompt tokens plus all of max_tokens."""
        usage = Usage(estimate_tokens(request.prompt_chars()), request.max_tokens)
        return self.cost(model, usage, batch=batch)


class Budget:
    """Spending limits that count settled spend and in-flight reservations.

    `limit_usd` bounds this run (the process); `total_limit_usd` bounds the
    whole tournament, of which `prior_spent_usd` went to earlier runs (every
    billed attempt in the log). Either may be None (no limit).
    """

    def __init__(
        self,
        limit_usd: float | None = None,
        *,
        total_limit_usd: float | None = None,
        prior_spent_usd: float = 0.0,
    ) -> None:
        for name, value in (("budget", limit_usd), ("tournament budget", total_limit_usd)):
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a finite amount >= 0 USD, got {value}")
        if not math.isfinite(prior_spent_usd) or prior_spent_usd < 0:
            raise ValueError(f"earlier spend must be >= 0 USD, got {prior_spent_usd}")
        self.limit_usd = limit_usd
        self.total_limit_usd = total_limit_usd
        self.prior_spent_usd = prior_spent_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self._reservations = 0

    def fits(self, amount: float) -> bool:
        """Whether a reservation of `amount` would stay within both limits."""
        return self.binding(amount) is None

    def binding(self, amount: float) -> str | None:
        """The limit a reservation of `amount` would break: "run", "tournament" or None."""
        # A tolerance keeps float rounding from refusing a call that exactly fits.
        run = self.spent_usd + self.reserved_usd + amount
        if self.limit_usd is not None and run > self.limit_usd * (1 + 1e-12):
            return "run"
        if self.total_limit_usd is not None and (
            self.prior_spent_usd + run > self.total_limit_usd * (1 + 1e-12)
        ):
            return "tournament"
        return None

    def try_reserve(self, amount: float) -> bool:
        """Reserve `amount` if it fits; return whether it did."""
        if not self.fits(amount):
            return False
        self.reserved_usd += amount
        self._reservations += 1
        return True

    def settle(self, reserved: float, actual: float) -> None:
        """Replace a reservation with the actual cost of the attempt."""
        self._reservations -= 1
        # With nothing in flight, drop the float residue of the subtractions.
        self.reserved_usd = max(0.0, self.reserved_usd - reserved) if self._reservations else 0.0
        self.spent_usd += actual

    @property
    def limited(self) -> bool:
        """Whether any limit is set."""
        return self.limit_usd is not None or self.total_limit_usd is not None

    @property
    def total_spent_usd(self) -> float:
        """Spend of earlier runs plus this one."""
        return self.prior_spent_usd + self.spent_usd

    @property
    def remaining_usd(self) -> float | None:
        """What is left under the tighter limit after spend and reservations (None: no limit)."""
        left: list[float] = []
        if self.limit_usd is not None:
            left.append(self.limit_usd - self.spent_usd - self.reserved_usd)
        if self.total_limit_usd is not None:
            left.append(self.total_limit_usd - self.total_spent_usd - self.reserved_usd)
        return max(0.0, min(left)) if left else None
