"""The scheduler: the one place that waits, retries and spends.

`Scheduler.call` runs one completion through its provider's `Governor`, retries
rate limits and transient failures with backoff, stops a provider on an auth
failure, defers one whose retry hint is too long, and keeps spend within the
budget. It never raises for a provider failure: every call ends in a
`CallOutcome`. An exception that is neither a classified `ProviderError` nor
an SDK or network error is a bug: its call fails at once (no retry) with the
traceback in its error, and after `MAX_INTERNAL_ERRORS` of them the scheduler
stops the run (the calls not started stay pending). Waiting calls are
admitted by priority (higher first), so work that unblocks other work goes out
before the backlog.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from arena.config import RetryConfig
from arena.providers import Provider
from arena.providers._remote import valid_text
from arena.scheduler._batching import BatchDispatcher
from arena.scheduler._budget import Budget, PriceTable
from arena.scheduler._governor import Clock, Governor, GovernorClosed, Permit, Sleep
from arena.types import (
    ErrorKind,
    GenerateRequest,
    GenerateResult,
    Limits,
    ProviderError,
    Usage,
    estimate_tokens,
)

log = logging.getLogger(__name__)

# Burst allowance of providers that call a server enforcing its own limits:
# half its presumed one-second bucket, as a margin for delivery jitter.
NETWORK_BURST_SECONDS = 0.5
# Concurrency of a provider over the network whose YAML sets no
# `max_concurrency`: the ceiling of its adaptive window.
DEFAULT_NETWORK_CONCURRENCY = 8

# Unexpected exceptions (bugs, not provider or network failures) after which
# the run stops: one could be a fluke of one answer, three are a pattern.
MAX_INTERNAL_ERRORS = 3
# Exceptions of these packages (SDKs, HTTP stacks) are provider or network
# failures an SDK provider did not classify: retried as transient.
NETWORK_PACKAGES = frozenset(
    {
        "aiohttp",
        "anthropic",
        "google",
        "h11",
        "h2",
        "httpcore",
        "httpx",
        "httpx2",
        "openai",
        "ssl",
        "urllib3",
    }
)
# Characters of an internal error's traceback kept in its error column.
TRACEBACK_CHARS = 4000

OutcomeStatus = Literal["ok", "failed", "deferred", "stopped", "budget"]
HaltReason = Literal["stopped", "budget", "errors"]


@dataclass(frozen=True)
class CallOutcome:
    """How one scheduled call ended. Only "ok" and "failed" are final."""

    status: OutcomeStatus
    result: GenerateResult | None
    error: str | None
    error_kind: ErrorKind | None
    attempts: int
    latency_s: float
    cost_usd: float  # every attempt's cost, failed-but-billed ones included
    started_at: float  # epoch seconds
    finished_at: float  # epoch seconds
    usage: Usage = Usage(0, 0)  # tokens billed over every attempt

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.status == "ok"

    @property
    def final(self) -> bool:
        """Whether the call is done for good (logged); otherwise it stays pending."""
        return self.status in ("ok", "failed")


@dataclass(eq=False)
class _ProviderState:
    name: str
    provider: Provider
    governor: Governor
    dead: str | None = None  # the one message every later call fails with
    deferred: str | None = None
    warned_usage: bool = False  # warned that the provider reports no usage


_Refusal = tuple[OutcomeStatus, str, ErrorKind | None]


class _Aborted(Exception):
    """An attempt cancelled by Scheduler.abort()."""


class Scheduler:
    """Runs provider calls within limits, with retries, backoff and a budget."""

    def __init__(
        self,
        providers: Mapping[str, Provider],
        limits: Mapping[str, Limits],
        retry: RetryConfig,
        budget_usd: float | None = None,
        prices: PriceTable | None = None,
        max_retry_after: float | None = None,
        *,
        tournament_budget_usd: float | None = None,
        prior_spent_usd: float = 0.0,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._retry = retry
        self._prices = prices if prices is not None else PriceTable()
        self._budget = Budget(
            budget_usd, total_limit_usd=tournament_budget_usd, prior_spent_usd=prior_spent_usd
        )
        self._max_retry_after = (
            retry.max_retry_after if max_retry_after is None else max_retry_after
        )
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._halted: HaltReason | None = None
        self._binding: str | None = None  # the budget limit that stopped the run
        self._aborted = False
        self.internal_errors = 0  # unexpected exceptions (bugs) raised by providers
        # Lone surrogates (invalid Unicode) in provider texts, replaced with U+FFFD.
        self.replaced_chars = 0
        self._attempting: set[asyncio.Task[object]] = set()  # tasks inside generate()
        # Batch mode (docs/cost.md): requests with a custom id to these providers go out as jobs.
        self.batch: BatchDispatcher | None = None
        self._states = {
            name: _ProviderState(
                name,
                provider,
                Governor(
                    _effective_limits(limits.get(name), provider.over_network),
                    clock=clock,
                    sleep=sleep,
                    probe_first=provider.over_network,
                    burst_seconds=NETWORK_BURST_SECONDS if provider.over_network else 1.0,
                ),
            )
            for name, provider in providers.items()
        }

    # -- public state ----------------------------------------------------------

    @property
    def spent_usd(self) -> float:
        """Actual cost of every attempt settled so far."""
        return self._budget.spent_usd

    @property
    def reserved_usd(self) -> float:
        """Worst-case cost of the attempts in flight."""
        return self._budget.reserved_usd

    @property
    def budget(self) -> Budget:
        """The spending budget (its limit is None when unlimited)."""
        return self._budget

    @property
    def budget_exhausted(self) -> bool:
        """Whether a call was refused for the budget (no new calls start)."""
        return self._halted == "budget"

    @property
    def stopped(self) -> bool:
        """Whether new attempts are refused (stop() was called or the budget ran out)."""
        return self._halted is not None

    @property
    def stopped_by_errors(self) -> str | None:
        """Why the run was stopped for unexpected exceptions (None when it was not)."""
        if self._halted != "errors":
            return None
        return (
            f"stopped after {self.internal_errors} unexpected errors (bugs, not provider "
            "failures; tracebacks in the error column and the log): remaining calls pending"
        )

    @property
    def dead_providers(self) -> dict[str, str]:
        """Providers stopped by an authentication failure, with the message."""
        return {s.name: s.dead for s in self._states.values() if s.dead is not None}

    @property
    def deferred_providers(self) -> dict[str, str]:
        """Providers whose remaining calls are deferred (long retry hint), with why."""
        return {s.name: s.deferred for s in self._states.values() if s.deferred is not None}

    def governor(self, provider_name: str) -> Governor:
        """The governor of one provider."""
        return self._state(provider_name).governor

    def stop(self) -> None:
        """Start no new attempt; waiting calls return "stopped"; in-flight ones finish."""
        self._halt("stopped")

    def abort(self) -> None:
        """stop(), and cancel the attempts in flight: their calls return "stopped" at once.

        What an aborted attempt cost is unknown (the provider may bill it); it
        is not counted. Use it when the grace period after a stop is over.
        """
        self.stop()
        self._aborted = True
        for task in list(self._attempting):
            task.cancel()

    @property
    def in_flight(self) -> int:
        """Attempts inside a provider call right now."""
        return len(self._attempting)

    # -- the call ------------------------------------------------------------

    async def call(
        self,
        provider_name: str,
        request: GenerateRequest,
        *,
        model_key: str | None = None,
        priority: int = 0,
        custom_id: str | None = None,
    ) -> CallOutcome:
        """Run one completion to an outcome: ok, failed, deferred, stopped or budget.

        While the provider's governor makes calls wait, a higher `priority`
        (`arena.runner.Priority`) is admitted first, equal ones in arrival order.
        With a `custom_id`, a provider in batch mode answers it from a batch job
        (`BatchDispatcher`), and so does any provider whose earlier run left a
        job holding it open; a request a job did not execute is `deferred`.
        """
        batch = self.batch
        if (
            custom_id is not None
            and batch is not None
            and batch.batched(provider_name)
            and (batch.submits(provider_name) or await batch.holds(custom_id))
        ):
            return await self._batch_call(provider_name, request, model_key, custom_id)
        state = self._state(provider_name)
        governor = state.governor
        retry = self._retry
        started_at = time.time()
        start = self._clock()
        prompt_tokens = estimate_tokens(request.prompt_chars())
        tokens = prompt_tokens + request.max_tokens
        price_model = self._price_model(request, model_key)
        worst_cost = (
            self._prices.cost(price_model, Usage(prompt_tokens, request.max_tokens))
            if price_model in self._prices
            else 0.0
        )
        attempts = 0
        latency = 0.0
        spent = 0.0
        billed = Usage(0, 0)

        def finish(
            status: OutcomeStatus,
            error: str | None = None,
            kind: ErrorKind | None = None,
            result: GenerateResult | None = None,
        ) -> CallOutcome:
            return CallOutcome(
                status=status,
                result=result,
                error=error,
                error_kind=kind,
                attempts=attempts,
                latency_s=latency,
                cost_usd=spent,
                started_at=started_at,
                finished_at=started_at + max(0.0, self._clock() - start),
                usage=billed,
            )

        while True:
            refusal = self._refusal(state)
            if refusal is not None:
                return finish(*refusal)
            try:
                permit = await governor.acquire(tokens, priority)
            except GovernorClosed:
                return finish(*(self._refusal(state) or ("stopped", "scheduler stopped", None)))
            refusal = self._refusal(state)  # stopped while this call was being admitted
            if refusal is not None:
                governor.settle(permit, 0, sent=False)
                return finish(*refusal)
            if not self._budget.try_reserve(worst_cost):
                governor.settle(permit, 0, sent=False)
                message = self._budget_message(worst_cost)
                self._halt("budget")
                return finish("budget", message)

            attempts += 1
            try:
                result, error, latency, cost, used = await self._attempt(
                    state, request, permit, price_model, worst_cost
                )
            except _Aborted:
                attempts -= 1  # never answered: not logged as an attempt
                return finish("stopped", "cancelled: the grace period after a stop ran out")
            spent += cost
            billed = billed + used  # cache and reasoning counts too
            if result is not None:
                return finish("ok", result=result)
            assert error is not None
            if isinstance(error, _Internal):
                self._internal_error(state)
                return finish("failed", error.message, ErrorKind.PERMANENT)

            if error.kind is ErrorKind.AUTH:
                return finish("failed", self._mark_dead(state, error), ErrorKind.AUTH)
            if error.kind is ErrorKind.PERMANENT:
                return finish("failed", str(error), error.kind)
            if error.overload:
                governor.record_overload(permit)
            if error.kind is ErrorKind.RATE_LIMIT:
                hint = error.retry_after
                if hint is not None and hint > self._max_retry_after:
                    return finish("deferred", self._defer(state, error), error.kind)
                pause = hint if hint is not None else self._backoff_cap(attempts)
                governor.record_rate_limit(permit, pause)
                if attempts >= retry.max_attempts:
                    return finish("failed", str(error), error.kind)
                continue  # the next acquire waits out the provider-wide pause
            # Transient: full-jitter exponential backoff, interrupted by stop().
            if attempts >= retry.max_attempts:
                return finish("failed", str(error), error.kind)
            await governor.sleep(self._rng.uniform(0.0, self._backoff_cap(attempts)))

    async def _batch_call(
        self, provider_name: str, request: GenerateRequest, model_key: str | None, custom_id: str
    ) -> CallOutcome:
        """One request answered by a batch job, priced at the batch API's prices."""
        assert self.batch is not None
        state = self._state(provider_name)
        started_at = time.time()
        start = self._clock()
        price_model = self._price_model(request, model_key)
        prompt_tokens = estimate_tokens(request.prompt_chars())
        worst = Usage(prompt_tokens, request.max_tokens)
        worst_cost = (
            self._prices.cost(price_model, worst, batch=True)
            if price_model in self._prices
            else 0.0
        )

        def outcome(
            status: OutcomeStatus,
            error: str | None = None,
            kind: ErrorKind | None = None,
            result: GenerateResult | None = None,
            cost: float = 0.0,
            used: Usage = _NO_USAGE,
        ) -> CallOutcome:
            elapsed = max(0.0, self._clock() - start)
            return CallOutcome(
                status,
                result,
                error,
                kind,
                1 if status in ("ok", "failed") else 0,
                elapsed,
                cost,
                started_at,
                started_at + elapsed,
                used,
            )

        refusal = self._refusal(state)
        if refusal is not None:
            return outcome(*refusal)
        if not self._budget.try_reserve(worst_cost):
            message = self._budget_message(worst_cost)
            self._halt("budget")
            return outcome("budget", message)
        cost = 0.0
        # Waiting for a job is an attempt in flight: abort() ends the wait (the job
        # stays open; the next run adopts it).
        task = asyncio.current_task()
        if task is not None:
            self._attempting.add(task)
        try:
            got = await self.batch.request(provider_name, custom_id, request)
            used = got.usage if got is not None else Usage(0, 0)
            if got is not None and used.total:
                cost = self._prices.cost(price_model, used, batch=True)
        except asyncio.CancelledError:
            if not self._aborted or task is None:
                raise
            task.uncancel()  # cancelled by abort(), not by the caller
            return outcome("stopped", "cancelled: the grace period after a stop ran out")
        finally:
            if task is not None:
                self._attempting.discard(task)
            self._budget.settle(worst_cost, cost)
        if got is None:
            return outcome("deferred", "not executed by its batch job (cancelled or expired)")
        if got.result is not None:
            try:
                result = self._valid(state, got.result)
            except ProviderError as exc:
                return outcome("failed", str(exc), exc.kind, cost=cost, used=used)
            return outcome("ok", result=result, cost=cost, used=used)
        error = got.error
        assert error is not None
        return outcome("failed", str(error), error.kind, cost=cost, used=used)

    async def _attempt(
        self,
        state: _ProviderState,
        request: GenerateRequest,
        permit: Permit,
        price_model: str,
        worst_cost: float,
    ) -> tuple[GenerateResult | None, ProviderError | None, float, float, Usage]:
        """One generate() call -> (result, error, latency, cost, usage); always settles."""
        used = Usage(0, 0)
        cost = 0.0
        result: GenerateResult | None = None
        error: ProviderError | None = None
        aborted = False
        began = self._clock()
        task = asyncio.current_task()
        if task is not None:
            self._attempting.add(task)
        try:
            result = self._valid(state, await state.provider.generate(request))
            used = result.usage
            if not used.total:
                used = self._estimated_usage(state, request, result.text)
                result = GenerateResult(result.text, used, result.rate_headers)
        except ProviderError as exc:
            error = exc
            if exc.usage is not None:  # billed although unusable
                used = exc.usage
        except Exception as exc:
            error = _unexpected(state, exc)
        except asyncio.CancelledError:
            if not self._aborted or task is None:
                raise
            task.uncancel()  # cancelled by abort(), not by the caller
            aborted = True
        finally:
            if task is not None:
                self._attempting.discard(task)
            latency = self._clock() - began
            if used.total:
                cost = self._prices.cost(price_model, used)
            state.governor.settle(permit, used.total)
            self._budget.settle(worst_cost, cost)
        if aborted:
            raise _Aborted
        if result is not None:
            state.governor.record_success(result.rate_headers)
        return result, error, latency, cost, used

    # -- helpers -------------------------------------------------------------

    def _state(self, provider_name: str) -> _ProviderState:
        state = self._states.get(provider_name)
        if state is None:
            known = ", ".join(sorted(self._states)) or "none"
            raise KeyError(f"unknown provider '{provider_name}' (known: {known})")
        return state

    def _price_model(self, request: GenerateRequest, model_key: str | None) -> str:
        if model_key is not None and model_key in self._prices:
            return model_key
        return request.model

    def _valid(self, state: _ProviderState, result: GenerateResult) -> GenerateResult:
        """The result with its text made valid Unicode (lone surrogates replaced, counted)."""
        text, replaced = valid_text(result.text)
        if not replaced:
            return result
        self.replaced_chars += replaced
        log.warning(
            "provider %s answered %d lone surrogate(s) (not valid Unicode): replaced with U+FFFD",
            state.name,
            replaced,
        )
        return GenerateResult(text, result.usage, result.rate_headers)

    def _estimated_usage(self, state: _ProviderState, request: GenerateRequest, text: str) -> Usage:
        """Tokens counted from the texts when the provider reported none (warned once)."""
        if not state.warned_usage:
            state.warned_usage = True
            log.warning(
                "provider %s reports no token usage: tokens are estimated from the text "
                "(4 characters a token) for cost and budget, and the rows flagged "
                "usage_estimated",
                state.name,
            )
        return Usage(
            estimate_tokens(request.prompt_chars()), estimate_tokens(len(text)), estimated=True
        )

    def _refusal(self, state: _ProviderState) -> _Refusal | None:
        if state.dead is not None:
            return ("failed", state.dead, ErrorKind.AUTH)
        if state.deferred is not None:
            return ("deferred", state.deferred, ErrorKind.RATE_LIMIT)
        if self._halted == "budget":
            return ("budget", self._budget_message(None), None)
        if self._halted == "stopped":
            return ("stopped", "scheduler stopped", None)
        if self._halted == "errors":
            return ("stopped", self.stopped_by_errors or "scheduler stopped", None)
        return None

    def _backoff_cap(self, attempt: int) -> float:
        retry = self._retry
        return min(retry.backoff_max, retry.backoff_base * 2.0 ** min(attempt - 1, 60))

    def _budget_message(self, needed: float | None) -> str:
        budget = self._budget
        which = budget.binding(needed or 0.0) or self._binding or "run"
        self._binding = which
        flight = f"${budget.reserved_usd:.4f} in flight"
        if needed is not None:
            flight += f", the next call needs up to ${needed:.4f}"
        if which == "tournament":
            return (
                f"tournament budget (budget_usd) of ${budget.total_limit_usd or 0.0:.4f} "
                f"reached: spent ${budget.total_spent_usd:.4f} over every run "
                f"(${budget.prior_spent_usd:.4f} before this one; {flight}); "
                "remaining calls skipped: raise budget_usd in the YAML and run again to continue"
            )
        return (
            f"budget of ${budget.limit_usd or 0.0:.4f} for this run reached: "
            f"spent ${budget.spent_usd:.4f} ({flight}); remaining calls skipped: "
            "run again (with a larger --budget if needed) to continue"
        )

    def _mark_dead(self, state: _ProviderState, error: ProviderError) -> str:
        if state.dead is None:
            state.dead = (
                f"provider {state.name}: authentication failed: {error.message}; "
                "remaining calls skipped"
            )
            log.error(state.dead)
            state.governor.close("dead")
        return state.dead

    def _defer(self, state: _ProviderState, error: ProviderError) -> str:
        if state.deferred is None:
            hint = error.retry_after if error.retry_after is not None else math.inf
            state.deferred = (
                f"provider {state.name}: rate limited with a retry hint of {hint:.0f}s "
                f"(over the {self._max_retry_after:.0f}s limit): {error.message}; "
                "remaining calls deferred"
            )
            log.warning(state.deferred)
            state.governor.close("deferred")
        return state.deferred

    def _internal_error(self, state: _ProviderState) -> None:
        self.internal_errors += 1
        if self.internal_errors >= MAX_INTERNAL_ERRORS and self._halted is None:
            self._halt("errors")
            log.error("provider %s: %s", state.name, self.stopped_by_errors)

    def _halt(self, reason: HaltReason) -> None:
        if self._halted is not None:
            return
        self._halted = reason
        for state in self._states.values():
            state.governor.close(reason)


_NO_USAGE = Usage(0, 0)


class _Internal(ProviderError):
    """An unexpected exception from a provider (a bug): its call fails at once."""


def is_network_error(exc: BaseException) -> bool:
    """Whether an exception is an SDK's or the network's (retried) rather than a bug."""
    if isinstance(exc, (OSError, TimeoutError, EOFError)):
        return True  # sockets, SSL, timeouts, connections closed
    return any(cls.__module__.split(".")[0] in NETWORK_PACKAGES for cls in type(exc).__mro__)


def _unexpected(state: _ProviderState, exc: Exception) -> ProviderError:
    """The ProviderError an unclassified exception becomes: transient, or internal (a bug)."""
    redact = getattr(state.provider, "redact", None)
    message = f"{type(exc).__name__}: {exc}"
    if callable(redact):
        message = str(redact(message))
    if is_network_error(exc):
        return ProviderError(ErrorKind.TRANSIENT, f"unexpected {message} from provider")
    frames = "".join(traceback.format_tb(exc.__traceback__))
    text = f"internal error: {message}\nTraceback (most recent call last):\n{frames}"
    if len(text) > TRACEBACK_CHARS:
        text = text[: TRACEBACK_CHARS // 4] + "\n...\n" + text[-3 * TRACEBACK_CHARS // 4 :]
    log.error("provider %s raised an unexpected exception (a bug): %s", state.name, text)
    return _Internal(ErrorKind.PERMANENT, text)


def _effective_limits(limits: Limits | None, over_network: bool) -> Limits:
    """A provider's limits; one over the network gets a default concurrency ceiling."""
    limits = limits or Limits()
    if over_network and limits.max_concurrency is None:
        return Limits(DEFAULT_NETWORK_CONCURRENCY, limits.rpm, limits.tpm)
    return limits
