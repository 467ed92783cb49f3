"""Per-key rate limits the fake server enforces: request and token buckets."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from arena.fakeserver._config import ServerLimits


class _Bucket:
    """A token bucket: `rate` per second, at most `capacity`, full at start."""

    __slots__ = ("per_minute", "rate", "capacity", "level", "stamp")

    def __init__(self, per_minute: float, burst_seconds: float, now: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_seconds)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait_for(self, need: float) -> float:
        return max(0.0, (need - self.level) / self.rate)

    def until_full(self) -> float:
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass(frozen=True)
class LimitState:
    """What the rate-limit headers report after a request."""

    limit_requests: float | None
    remaining_requests: float | None
    reset_requests: float  # seconds until the request bucket is full again
    limit_tokens: float | None
    remaining_tokens: float | None
    reset_tokens: float


@dataclass(frozen=True)
class Refusal:
    """A request the limits refuse: which bucket, and when it would fit."""

    bucket: str  # "requests" | "tokens"
    retry_after: float


class KeyLimiter:
    """The buckets of one API key."""

    def __init__(self, limits: ServerLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        now = clock()
        self.requests = _Bucket(limits.rpm, limits.burst_seconds, now) if limits.rpm else None
        self.tokens = _Bucket(limits.tpm, limits.burst_seconds, now) if limits.tpm else None

    def admit(self, tokens: int) -> Refusal | None:
        """Take one request and `tokens` tokens, or say why and for how long not."""
        now = self._clock()
        wait_requests = wait_tokens = 0.0
        if self.requests is not None:
            self.requests.refill(now)
            wait_requests = self.requests.wait_for(1.0)
        need = 0.0
        if self.tokens is not None:
            self.tokens.refill(now)
            need = min(float(tokens), self.tokens.capacity)
            wait_tokens = self.tokens.wait_for(need)
        if wait_requests > 0 or wait_tokens > 0:
            bucket = "requests" if wait_requests >= wait_tokens else "tokens"
            return Refusal(bucket, max(wait_requests, wait_tokens))
        if self.requests is not None:
            self.requests.level -= 1.0
        if self.tokens is not None:
            self.tokens.level -= need
        return None

    def taken(self, tokens: int) -> float:
        """Tokens `admit(tokens)` takes from the bucket (clipped to its capacity)."""
        return min(float(tokens), self.tokens.capacity) if self.tokens is not None else 0.0

    def refund(self, tokens: float) -> None:
        """Give back reserved tokens that were not used (negative: charge usage beyond)."""
        if self.tokens is not None and tokens != 0:
            self.tokens.refill(self._clock())
            self.tokens.level = min(self.tokens.capacity, self.tokens.level + tokens)

    def state(self) -> LimitState:
        """Limits, what remains, and when each bucket is full again."""
        now = self._clock()
        r, t = self.requests, self.tokens
        for bucket in (r, t):
            if bucket is not None:
                bucket.refill(now)
        return LimitState(
            limit_requests=r.per_minute if r else None,
            remaining_requests=max(0.0, math.floor(r.level)) if r else None,
            reset_requests=r.until_full() if r else 0.0,
            limit_tokens=t.per_minute if t else None,
            remaining_tokens=max(0.0, math.floor(t.level)) if t else None,
            reset_tokens=t.until_full() if t else 0.0,
        )
