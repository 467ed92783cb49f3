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
