"""Per-provider admission control: concurrency, request and token buckets, pauses.

One `Governor` per provider. Calls wait in one queue ordered by priority
(higher first), then arrival; whoever is at its head is admitted as soon as a
concurrency slot is free, the provider is not paused and both token buckets
hold enough. Nothing polls: a released slot or a refund admits waiters on the
next loop step (after the caller has reported a 429, an auth failure or rate
headers), and when the head must wait for time a single timer sleeps exactly
as long as the buckets or the pause need.

Two feedback loops adapt to the server: 429s cut the request and token rates
(and clean successes creep them back), and overload (timeouts, 5xx) halves
the concurrency window, which grows back by one slot per window of successes
(AIMD), never above the configured `max_concurrency`.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from arena.types import Limits

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[object]]

# Adaptive rate: cut on each 429 episode, creep back after clean successes.
CUT_FACTOR = 0.7
FLOOR_FRACTION = 0.05
CREEP_FRACTION = 0.05
CREEP_EVERY = 50
# Adaptive concurrency: halve the window on each overload episode (timeouts,
# 5xx), add one slot per window of successes.
WINDOW_CUT_FACTOR = 0.5

REQUEST_HEADERS = (
    "x-ratelimit-remaining-requests",
    "anthropic-ratelimit-requests-remaining",
)
TOKEN_HEADERS = (
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-remaining-input-tokens",
    "x-ratelimit-remaining-output-tokens",
    "anthropic-ratelimit-tokens-remaining",
    "anthropic-ratelimit-input-tokens-remaining",
    "anthropic-ratelimit-output-tokens-remaining",
)

# Bucket levels are floats; this much shortfall counts as enough.
_EPS = 1e-9


class GovernorClosed(Exception):
    """The governor admits nothing more (stopped, provider dead or deferred)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Bucket:
    """A token bucket whose level may go negative (debt from settled usage)."""

    __slots__ = ("configured", "rate", "capacity", "level", "stamp", "min_capacity", "burst")

    def __init__(
        self, per_minute: float, min_capacity: float, now: float, burst_seconds: float = 1.0
    ) -> None:
        self.configured = per_minute
        self.min_capacity = min_capacity
        self.burst = burst_seconds
        self.rate = per_minute / 60.0
        self.capacity = max(min_capacity, self.rate * burst_seconds)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait_for(self, need: float) -> float:
        """Seconds until `need` is available (after `refill`)."""
        deficit = need - self.level
        if deficit <= _EPS * max(1.0, need):
            return 0.0
        return deficit / self.rate

    def set_fraction(self, fraction: float, now: float) -> None:
        self.refill(now)
        self.rate = self.configured * fraction / 60.0
        self.capacity = max(self.min_capacity, self.rate * self.burst)
        self.level = min(self.level, self.capacity)

    def lower_to(self, remaining: float, now: float) -> None:
        self.refill(now)
        if remaining < self.level:
            self.level = remaining


@dataclass(eq=False)
class Permit:
    """One admitted call: what it reserved, and when it was admitted."""

    tokens: float  # tokens reserved from the tpm bucket (clipped to its capacity)
    seq: int  # admission order, to tell 429s of one episode apart from a new one
    admitted_at: float
    settled: bool = False


@dataclass(eq=False)
class _Waiter:
    priority: int
    order: int
    tokens: int
    future: asyncio.Future[Permit]

    def __lt__(self, other: _Waiter) -> bool:
        # Higher priority first, then first come, first served.
        return (-self.priority, self.order) < (-other.priority, other.order)


class Governor:
    """Admits one provider's calls within its concurrency, rpm and tpm limits.

    Waiting calls are admitted by priority (higher first), then in arrival
    order. Use it from one event loop thread. Every admitted `Permit` must be settled
    once with `settle` (the scheduler does it in a `finally`). With
    `probe_first`, the first call runs alone: the others are admitted once an
    attempt has been sent and settled. `burst_seconds` sizes the buckets: how
    many seconds of the rate may go out at once after a quiet spell (see
    `Provider.over_network`).
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        probe_first: bool = False,
        burst_seconds: float = 1.0,
    ) -> None:
        limits = limits or Limits()
        if limits.max_concurrency is not None and limits.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {limits.max_concurrency}")
        for name, value in (("rpm", limits.rpm), ("tpm", limits.tpm)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, got {value}")
        if not (burst_seconds > 0 and math.isfinite(burst_seconds)):
            raise ValueError(f"burst_seconds must be a positive number, got {burst_seconds}")
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        now = clock()
        self._max_concurrency = limits.max_concurrency or 0  # 0: unlimited
        # The adaptive concurrency window (AIMD), within max_concurrency.
        self._window = float(self._max_concurrency)
        self._window_seq = -1  # admission seq at the start of the current overload episode
        self._window_successes = 0
        self._requests = _Bucket(limits.rpm, 1.0, now, burst_seconds) if limits.rpm else None
        self._tokens = _Bucket(limits.tpm, 1.0, now, burst_seconds) if limits.tpm else None
        self._in_flight = 0
        self._probing = probe_first  # until an attempt has been sent and settled
        self._queue: list[_Waiter] = []  # a heap: see _Waiter.__lt__
        self._arrivals = 0
        self._paused_until = -math.inf
        self._timer: asyncio.Task[None] | None = None
        self._timer_due = math.inf
        self._drain_scheduled = False
        self._closed: str | None = None
        self._closed_signal: asyncio.Future[None] | None = None
        self._fraction = 1.0
        self._admitted = 0
        self._episode_seq = -1  # admission seq at the start of the current 429 episode
        self._successes = 0

    # -- introspection -------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Calls admitted and not yet settled."""
        return self._in_flight

    @property
    def concurrency(self) -> int | None:
        """Calls admitted at once now: the adaptive window (None when unlimited)."""
        return int(self._window) if self._max_concurrency else None

    @property
    def waiting(self) -> int:
        """Calls queued for admission (cancelled ones may still be counted)."""
        return len(self._queue)

    @property
    def closed(self) -> str | None:
        """Why the governor was closed, or None while it admits calls."""
        return self._closed

    @property
    def paused_until(self) -> float:
        """Clock time before which no call is admitted."""
        return self._paused_until

    @property
    def rate_fraction(self) -> float:
        """Effective rate as a fraction of the configured rpm/tpm (adaptive)."""
        return self._fraction

    @property
    def effective_rpm(self) -> float | None:
        """Requests per minute currently allowed (None when unlimited)."""
        return None if self._requests is None else self._requests.rate * 60.0

    @property
    def effective_tpm(self) -> float | None:
        """Tokens per minute currently allowed (None when unlimited)."""
        return None if self._tokens is None else self._tokens.rate * 60.0

    @property
    def requests_available(self) -> float | None:
        """Current level of the request bucket (None when unlimited)."""
        if self._requests is None:
            return None
        self._requests.refill(self._clock())
        return self._requests.level

    @property
    def tokens_available(self) -> float | None:
        """Current level of the token bucket (None when unlimited)."""
        if self._tokens is None:
            return None
        self._tokens.refill(self._clock())
        return self._tokens.level

    # -- admission -----------------------------------------------------------

    async def acquire(self, tokens: int, priority: int = 0) -> Permit:
        """Wait until a call reserving `tokens` may start; raise GovernorClosed.

        Waiters are admitted highest `priority` first, then in arrival order.
        """
        if self._closed is not None:
            raise GovernorClosed(self._closed)
        if not self._queue and self._slot_free():
            now = self._clock()
            if self._delay(tokens, now) <= 0.0:
                return self._admit(tokens, now)
        future: asyncio.Future[Permit] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(priority, self._arrivals, tokens, future)
        self._arrivals += 1
        heapq.heappush(self._queue, waiter)
        if self._queue[0] is waiter:
            self._drain()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                # Admitted just as the caller was cancelled: give the slot back.
                self.settle(future.result(), 0, sent=False)
            else:
                self._drain()
            raise

    def settle(self, permit: Permit, used_tokens: int | None, *, sent: bool = True) -> None:
        """End a call: free its slot and replace its token reservation with real usage."""
        if permit.settled:
            return
        permit.settled = True
        self._in_flight -= 1
        if sent:
            self._probing = False
        now = self._clock()
        if self._tokens is not None:
            self._tokens.refill(now)
            level = self._tokens.level + permit.tokens - (used_tokens or 0)
            self._tokens.level = min(self._tokens.capacity, level)
        if not sent and self._requests is not None:
            self._requests.refill(now)
            self._requests.level = min(self._requests.capacity, self._requests.level + 1.0)
        if self._queue and not self._drain_scheduled:
            # Admit waiters on the next loop step, after the caller has reported
            # what the attempt said (a 429's pause, an auth failure, headers).
            self._drain_scheduled = True
            asyncio.get_running_loop().call_soon(self._scheduled_drain)

    def _scheduled_drain(self) -> None:
        self._drain_scheduled = False
        self._drain()

    def _slot_free(self) -> bool:
        if self._probing:
            return self._in_flight == 0
        return self._max_concurrency == 0 or self._in_flight < int(self._window)

    def _delay(self, tokens: int, now: float) -> float:
        """Seconds until a call reserving `tokens` fits (0 when it fits now)."""
        delay = self._paused_until - now
        if self._requests is not None:
            self._requests.refill(now)
            delay = max(delay, self._requests.wait_for(1.0))
        if self._tokens is not None:
            self._tokens.refill(now)
            delay = max(delay, self._tokens.wait_for(min(tokens, self._tokens.capacity)))
        return delay

    def _admit(self, tokens: int, now: float) -> Permit:
        reserved = 0.0
        if self._requests is not None:
            self._requests.level -= 1.0
        if self._tokens is not None:
            # A reservation larger than the bucket is clipped so that it can proceed.
            reserved = float(min(tokens, self._tokens.capacity))
            self._tokens.level -= reserved
        self._in_flight += 1
        seq = self._admitted
        self._admitted += 1
        return Permit(tokens=reserved, seq=seq, admitted_at=now)

    def _drain(self) -> None:
        """Admit queued calls from the head while they fit; else arm the timer."""
        queue = self._queue
        now = self._clock()
        while queue:
            head = queue[0]
            if head.future.done():  # cancelled while waiting
                heapq.heappop(queue)
                continue
            if self._closed is not None or not self._slot_free():
                return  # a settle() will drain again
            delay = self._delay(head.tokens, now)
            if delay > 0.0:
                self._arm_timer(now + delay, delay)
                return
            heapq.heappop(queue)
            head.future.set_result(self._admit(head.tokens, now))

    def _arm_timer(self, due: float, delay: float) -> None:
        if self._timer is not None:
            if self._timer_due <= due + _EPS:
                return  # the timer already wakes in time; it will re-check
            self._timer.cancel()
        self._timer_due = due
        self._timer = asyncio.ensure_future(self._wake_after(delay))

    async def _wake_after(self, delay: float) -> None:
        await self._sleep(delay)
        if self._timer is asyncio.current_task():
            self._timer = None
            self._timer_due = math.inf
        self._drain()

    # -- feedback from attempts ---------------------------------------------

    def pause(self, seconds: float) -> None:
        """Admit nothing for `seconds` from now (a retry hint); pauses only extend."""
        self._paused_until = max(self._paused_until, self._clock() + max(0.0, seconds))

    def record_rate_limit(self, permit: Permit, retry_after: float | None = None) -> None:
        """A 429: pause for the hint and cut the rate once per episode."""
        if retry_after is not None:
            self.pause(retry_after)
        self._successes = 0
        # 429s of calls admitted before the episode began belong to that episode.
        if permit.seq > self._episode_seq:
            self._episode_seq = self._admitted - 1
            self._set_fraction(max(FLOOR_FRACTION, self._fraction * CUT_FACTOR))

    def record_overload(self, permit: Permit) -> None:
        """A timeout or 5xx: halve the concurrency window once per episode (floor 1)."""
        self._window_successes = 0
        if not self._max_concurrency:
            return
        # Failures of calls admitted before the episode began belong to that episode.
        if permit.seq > self._window_seq:
            self._window_seq = self._admitted - 1
            self._window = max(1.0, math.floor(self._window * WINDOW_CUT_FACTOR))

    def record_success(self, headers: Mapping[str, str] | None = None) -> None:
        """A success: grow the window and creep the rate back; re-sync from rate headers."""
        if self._max_concurrency and self._window < self._max_concurrency:
            self._window_successes += 1
            if self._window_successes >= int(self._window):
                self._window_successes = 0
                self._window = min(float(self._max_concurrency), self._window + 1.0)
                if self._queue and not self._drain_scheduled:
                    self._drain_scheduled = True
                    asyncio.get_running_loop().call_soon(self._scheduled_drain)
        self._successes += 1
        if self._successes >= CREEP_EVERY:
            self._successes = 0
            if self._fraction < 1.0:
                self._set_fraction(min(1.0, self._fraction + CREEP_FRACTION))
        if headers:
            self.resync(headers)

    def resync(self, headers: Mapping[str, str]) -> None:
        """Lower the buckets to what the server says remains (never raise them)."""
        now = self._clock()
        if self._requests is not None:
            remaining = _min_header(headers, REQUEST_HEADERS)
            if remaining is not None:
                self._requests.lower_to(remaining, now)
        if self._tokens is not None:
            remaining = _min_header(headers, TOKEN_HEADERS)
            if remaining is not None:
                self._tokens.lower_to(remaining, now)

    def _set_fraction(self, fraction: float) -> None:
        self._fraction = fraction
        now = self._clock()
        for bucket in (self._requests, self._tokens):
            if bucket is not None:
                bucket.set_fraction(fraction, now)

    # -- closing and interruptible sleep ------------------------------------

    def close(self, reason: str) -> None:
        """Admit nothing more: every waiter (and later caller) gets GovernorClosed."""
        if self._closed is not None:
            return
        self._closed = reason
        queue, self._queue = self._queue, []
        for waiter in queue:
            if not waiter.future.done():
                waiter.future.set_exception(GovernorClosed(reason))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._closed_signal is not None and not self._closed_signal.done():
            self._closed_signal.set_result(None)

    async def sleep(self, seconds: float) -> bool:
        """Sleep through the injected sleep; return False early if the governor closes."""
        if self._closed is not None:
            return False
        if seconds <= 0:
            return True
        if self._closed_signal is None:
            self._closed_signal = asyncio.get_running_loop().create_future()
        sleeper = asyncio.ensure_future(self._sleep(seconds))
        try:
            await asyncio.wait((sleeper, self._closed_signal), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not sleeper.done():
                sleeper.cancel()
        return self._closed is None


def _min_header(headers: Mapping[str, str], names: tuple[str, ...]) -> float | None:
    found: float | None = None
    for name in names:
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = max(0.0, float(raw))
        except ValueError:
            continue
        if math.isfinite(value) and (found is None or value < found):
            found = value
    return found
