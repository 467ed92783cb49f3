"""Prices and the spending budget: worst-case reservations, settled with actual cost."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

from arena.types import GenerateRequest, Usage, estimate_tokens

_PER_MILLION = 1_000_000.0


class PriceTable(Mapping[str, tuple[float, float]]):
    """Model id -> (input USD per million tokens, output USD per million tokens)."""

    def __init__(self, prices: Mapping[str, tuple[float, float]] | None = None) -> None:
        table: dict[str, tuple[float, float]] = {}
        for model, (price_in, price_out) in (prices or {}).items():
            if (
                price_in < 0
                or price_out < 0
                or not (math.isfinite(price_in) and math.isfinite(price_out))
            ):
                raise ValueError(f"price of model '{model}' must be finite and >= 0")
            table[model] = (float(price_in), float(price_out))
        self._prices = table

    def __getitem__(self, model: str) -> tuple[float, float]:
        return self._prices[model]

    def __iter__(self) -> Iterator[str]:
        return iter(self._prices)

    def __len__(self) -> int:
        return len(self._prices)

    def cost(self, model: str, usage: Usage) -> float:
        """USD cost of `usage` on `model`; an unknown model costs 0."""
        price = self._prices.get(model)
        if price is None:
            return 0.0
        return (usage.input_tokens * price[0] + usage.output_tokens * price[1]) / _PER_MILLION

    def worst_case(self, model: str, request: GenerateRequest) -> float:
        """Most a request can cost: estimated prompt tokens plus all of max_tokens."""
        usage = Usage(estimate_tokens(request.prompt_chars()), request.max_tokens)
        return self.cost(model, usage)


class Budget:
    """A spending limit that counts both settled spend and in-flight reservations."""

    def __init__(self, limit_usd: float | None = None) -> None:
        if limit_usd is not None and (math.isnan(limit_usd) or limit_usd < 0):
            raise ValueError(f"budget must be >= 0 USD, got {limit_usd}")
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self._reservations = 0

    def fits(self, amount: float) -> bool:
        """Whether a reservation of `amount` would stay within the limit."""
        if self.limit_usd is None:
            return True
        # A tolerance keeps float rounding from refusing a call that exactly fits.
        return self.spent_usd + self.reserved_usd + amount <= self.limit_usd * (1 + 1e-12)

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
    def remaining_usd(self) -> float | None:
        """What is left after spend and reservations (None when unlimited)."""
        if self.limit_usd is None:
            return None
        return max(0.0, self.limit_usd - self.spent_usd - self.reserved_usd)
