"""Test support: a virtual-time event loop and a scripted fake provider.

`run_virtual` runs a coroutine on an event loop whose clock only moves when
every task is waiting: the loop jumps straight to the next timer instead of
sleeping. `asyncio.sleep`, `asyncio.wait(timeout=...)` and the scheduler's
timers all run in virtual time, so tests assert exact times and are
independent of machine load.
"""

from __future__ import annotations

import asyncio
import random
import selectors
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from arena.config import ProviderConfig
from arena.providers import Provider
from arena.types import (
    ErrorKind,
    GenerateRequest,
    GenerateResult,
    Message,
    ProviderError,
    Usage,
)

T = TypeVar("T")


class _VirtualSelector(selectors.DefaultSelector):
    """Never blocks: a wait of `timeout` seconds advances virtual time instead."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = super().select(0)
        if events:
            return events
        if timeout is None:
            raise RuntimeError("deadlock: every task waits and no timer is pending")
        self.now += timeout
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose time() is virtual (starts at 0)."""

    def __init__(self) -> None:
        self._virtual = _VirtualSelector()
        super().__init__(self._virtual)

    def time(self) -> float:
        return self._virtual.now


def run_virtual(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run `main()` to completion in virtual time."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main())


def now() -> float:
    """Virtual time of the running loop."""
    return asyncio.get_running_loop().time()


def request(prompt_chars: int = 40, max_tokens: int = 100, model: str = "m") -> GenerateRequest:
    """A request with a prompt of `prompt_chars` characters."""
    return GenerateRequest(
        model=model, messages=(Message("user", "x" * prompt_chars),), max_tokens=max_tokens
    )


def ok(
    text: str = "fine",
    input_tokens: int = 10,
    output_tokens: int = 20,
    headers: dict[str, str] | None = None,
) -> GenerateResult:
    """A successful result."""
    return GenerateResult(text, Usage(input_tokens, output_tokens), dict(headers or {}))


def rate_limited(retry_after: float | None = None) -> ProviderError:
    """A 429."""
    return ProviderError(ErrorKind.RATE_LIMIT, "slow down", retry_after=retry_after, status=429)


def transient(message: str = "overloaded") -> ProviderError:
    """A 503."""
    return ProviderError(ErrorKind.TRANSIENT, message, status=503)


Step = GenerateResult | BaseException | Callable[[GenerateRequest], GenerateResult]


class FakeProvider(Provider):
    """Replays a script of results and errors, one step per generate() call.

    Steps are taken in the order calls start; when the script runs out,
    `default` answers. Records how many calls ran at once and when each began.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        latency: float = 0.0,
        default: Step | None = None,
        name: str = "fake",
    ) -> None:
        super().__init__(name, ProviderConfig(type="fake"), {}, 0)
        self.script = list(script)
        self.latency = latency
        self.default: Step = default if default is not None else ok()
        self.calls = 0
        self.active = 0
        self.peak = 0
        self.started: list[float] = []
        self.on_start: Callable[[], None] | None = None

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.started.append(asyncio.get_running_loop().time())
        if self.on_start is not None:
            self.on_start()
        step = self.script.pop(0) if self.script else self.default
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, GenerateResult):
                return step
            return step(request)
        finally:
            self.active -= 1


class MaxJitter(random.Random):
    """A random source whose jitter is always the full backoff (exact times)."""

    def uniform(self, a: float, b: float) -> float:
        return b
