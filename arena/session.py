"""One run's context: providers, scheduler, log writer, runner, budget and closing, in one place.

Every command that makes calls (`arena run`, `arena retry-failed`, `arena
discuss`, `arena batcheval`, the nightly runs) hands its planners to
`run_planners` with a `RunSetup`: which providers to make, their limits and
prices, the retry policy and the budgets. `run_planners` makes the providers,
builds the scheduler (the budget of the YAML counts what earlier runs spent),
opens the one log writer, runs the planners through one `Runner`, and closes
the providers whatever happens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.config import ProviderConfig, RetryConfig, Tournament
from arena.providers import Provider, create_provider
from arena.runner import Planner, ProgressFn, Runner, RunSummary, default_window
from arena.scheduler import BatchDispatcher, BatchSettings, PriceTable, Scheduler, price_table
from arena.store import LogWriter, RunLog, StorageError
from arena.types import Limits

__all__ = ["RunSetup", "make_providers", "run_planners", "tournament_setup"]


@dataclass(frozen=True)
class RunSetup:
    """What a run needs besides its planners.

    `make_providers` makes one instance per provider entry the run uses (when
    the run starts; `run_planners` closes them); `provider_configs` gives
    their limits. `tournament_budget_usd` (the YAML's `budget_usd`) counts
    what earlier runs of the same log spent.
    """

    output_dir: Path
    make_providers: Callable[[], dict[str, Provider]]
    provider_configs: Mapping[str, ProviderConfig]
    retry: RetryConfig
    prices: PriceTable | None = None
    tournament_budget_usd: float | None = None
    tournament: str = ""  # the tag batch jobs carry


def make_providers(t: Tournament) -> dict[str, Provider]:
    """One provider instance per provider entry used by the tournament."""
    used = {t.provider_of(m) for m in t.used_models()}
    providers: dict[str, Provider] = {}
    for pname in sorted(used):
        pcfg = t.config.providers[pname]
        models = {
            t.provider_model_id(m): t.model(m) for m in t.config.models if t.provider_of(m) == pname
        }
        providers[pname] = create_provider(pname, pcfg, models, t.config.seed)
        providers[pname].bind(t)
    return providers


def tournament_setup(t: Tournament) -> RunSetup:
    """The setup of a tournament's run: its providers, prices, retry policy and budget."""
    return RunSetup(
        output_dir=t.output_dir,
        make_providers=lambda: make_providers(t),
        provider_configs=t.config.providers,
        retry=t.config.retry,
        prices=price_table(t),
        tournament_budget_usd=t.config.budget_usd,
        tournament=t.config.name,
    )


async def run_planners(
    planners: Sequence[Planner],
    setup: RunSetup,
    *,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
    compact_every: int = 2000,
    window: int | None = None,
    run_id: str | None = None,
    raise_storage_errors: bool = False,
) -> RunSummary:
    """Run `planners` together until none has anything more; the caller holds the run lock.

    `budget_usd` is the run's own budget (`--budget`); `on_scheduler` sees the
    scheduler before any call (the CLI's signal handlers stop it); `window`
    bounds the calls in flight (default: `default_window` of the providers'
    limits). A log that cannot be written ends the run with
    `RunSummary.storage_error` (with `raise_storage_errors`, raises the
    `StorageError` instead); one that cannot even be opened raises it.
    """
    log = RunLog(setup.output_dir)
    providers = setup.make_providers()
    try:
        limits = {name: setup.provider_configs[name].limits.to_limits() for name in providers}
        prior = log.spent_usd() if setup.tournament_budget_usd is not None else 0.0
        scheduler = Scheduler(
            providers,
            limits,
            setup.retry,
            budget_usd=budget_usd,
            prices=setup.prices,
            tournament_budget_usd=setup.tournament_budget_usd,
            prior_spent_usd=prior,
        )
        if on_scheduler is not None:
            on_scheduler(scheduler)
        summary: RunSummary | None = None
        try:
            async with log.writer(compact_every=compact_every) as writer:
                runner = Runner(
                    planners,
                    scheduler,
                    writer,
                    log,
                    window=window if window is not None else _window(setup, providers, limits),
                    progress=progress,
                    run_id=run_id,
                )
                dispatcher = _dispatcher(setup, providers, writer, log, runner.run_id)
                scheduler.batch = dispatcher
                try:
                    summary = await runner.run()
                finally:
                    if dispatcher is not None:
                        await dispatcher.close()
                if raise_storage_errors and runner.storage_error is not None:
                    raise runner.storage_error
        except StorageError as exc:
            if summary is None or raise_storage_errors:  # the log could not even be opened
                raise
            summary.storage_error = summary.storage_error or str(exc)
        return summary
    finally:
        for p in providers.values():
            await p.close()


def _window(
    setup: RunSetup, providers: Mapping[str, Provider], limits: Mapping[str, Limits]
) -> int:
    """The runner's window: `default_window`, plus room for a whole job of each batch provider.

    A call in batch mode waits for its job, so the window bounds a job's size:
    without the room, a 72,000-review run would go out as a hundred jobs of a
    few hundred requests, one after the other (each up to 24 hours).
    """
    room = 0
    for name, provider in providers.items():
        mode = setup.provider_configs[name].batch_mode()
        if mode is not None and getattr(provider, "batch_client", None) is not None:
            room += mode.max_requests
    return default_window(limits) + room


def _dispatcher(
    setup: RunSetup,
    providers: Mapping[str, Provider],
    writer: LogWriter,
    log: RunLog,
    run_id: str,
) -> BatchDispatcher | None:
    """The batch dispatcher: of the providers in batch mode, and of every provider with a
    batch API when an earlier run left jobs open (None: neither)."""
    batch_api = {
        name: make
        for name, provider in providers.items()
        if (make := getattr(provider, "batch_client", None)) is not None
    }
    if not batch_api:
        return None
    modes = {name: setup.provider_configs[name].batch_mode() for name in batch_api}
    submitting = [name for name, mode in modes.items() if mode is not None]
    settings = {
        name: BatchSettings(mode.max_requests, mode.max_wait, mode.poll_seconds)
        for name, mode in modes.items()
        if mode is not None
    }
    dispatcher = BatchDispatcher(
        {name: make() for name, make in batch_api.items()},
        settings,
        writer,
        log,
        tournament=setup.tournament,
        run_id=run_id,
        submitting=submitting,
    )
    return dispatcher if submitting or dispatcher.open_jobs else None
