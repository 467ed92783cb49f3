"""Running a tournament: preflight checks, the run snapshot, the lock, the plan file, history.

One runner (`arena.runner.Runner`, set up by `arena.session.run_planners`)
runs every stage's planner together: the all-pairs answers and reviews
(`arena.pipeline.AllPairsPlanner`, whose reviews a stage's selector may
choose) and the planners of the stages in `arena.stages`, each of which
starts its work as soon as what it needs is logged.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.config import FREE_TYPES, ConfigError, Tournament, load_tournament
from arena.errors import ArenaInputError, PreflightError
from arena.pipeline import AllPairsPlanner, Plan, build_plan
from arena.providers import ProviderUnavailable, create_provider
from arena.report import build_leaderboard, leaderboard_dict
from arena.rundir import RunStart, failed_only, record_history, recorded_config, start_run
from arena.runner import Planner, ProgressFn, RunSummary
from arena.runtime import release_memory_promptly, trim_heap
from arena.scheduler import Scheduler, price_table
from arena.session import run_planners, tournament_setup
from arena.shard import Shard, parse_shard
from arena.shard import check_directory as check_shard_directory
from arena.shard import for_directory as shard_for_directory
from arena.stages import preflight as stages_preflight
from arena.stages import review_selector, stage_planners
from arena.store import RunLock


def snapshot(t: Tournament) -> dict[str, Any]:
    """The run directory's tournament.json: who plays, and the sim truth when known."""
    models: dict[str, Any] = {}
    for name in t.used_models():
        m = t.model(name)
        models[name] = {
            "provider": t.provider_of(name),
            "provider_type": t.config.providers[t.provider_of(name)].type,
            "model": t.provider_model_id(name),
            "sim_skill": m.sim.skill if m.sim is not None else None,
        }
    for name, found in t.answer_files.items():  # contestants whose answers are a file
        models[name] = {
            "provider": t.provider_of(name),
            "provider_type": "file",
            "model": t.provider_model_id(name),
            "sim_skill": None,
            "answers": str(found.path.resolve()),
        }
    return {
        "name": t.name,
        "config_hash": t.config_hash(),
        # The questions, references and answer files' content (shards must agree on it).
        "inputs_hash": t.inputs_hash(),
        "contestants": t.contestants,
        "reviewers": t.reviewers,
        "questions": len(t.questions),
        "models": models,
        # `arena retry-failed DIR` and `arena status DIR` reload the config from here.
        "config_path": str(t.path.resolve()),
        # Question id -> category, for `arena leaderboard --by category`.
        "categories": {q.id: q.category for q in t.questions if q.category is not None},
        # `arena run --shard K/N`: this directory holds shard K's calls only.
        "shard": None if t.shard is None else {"index": t.shard[0], "count": t.shard[1]},
    }


def write_snapshot(t: Tournament, *, keep_config_path: bool = False) -> None:
    """Write tournament.json atomically.

    With `keep_config_path` (`arena retry-failed --config X`), the YAML path
    recorded by the last `arena run` stays: X is for that retry only.
    """
    t.output_dir.mkdir(parents=True, exist_ok=True)
    data = snapshot(t)
    recorded = recorded_config(t.output_dir) if keep_config_path else None
    if recorded is not None:
        data["config_path"] = str(recorded)
    tmp = t.output_dir / "tournament.json.tmp"
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(t.output_dir / "tournament.json")


def preflight(t: Tournament, budget_usd: float | None = None) -> list[str]:
    """Every problem that would stop the run (unknown type, missing SDK or key), before any call.

    `budget_usd` is the run's own budget (`--budget`): with it or the YAML's
    `budget_usd`, a model without a price is a problem unless `unpriced: allow`.
    """
    problems: list[str] = []
    used = {t.provider_of(m) for m in t.used_models()}
    for pname in sorted(used):
        pcfg = t.config.providers[pname]
        try:
            provider = create_provider(pname, pcfg, {}, t.config.seed)
        except ProviderUnavailable as exc:
            problems.append(str(exc))
            continue
        problems.extend(provider.check_ready())
    try:
        price_table(t)
    except ConfigError as exc:
        problems.append(str(exc))
    else:
        problems.extend(unpriced_budget_problems(t, budget_usd))
    problems.extend(stages_preflight(t))  # each stage checks its section (templates, ...)
    return problems


def unpriced_models(t: Tournament) -> list[str]:
    """Models of real (non-sim) providers that have no price: free as far as a budget knows."""
    prices = price_table(t)
    return [
        name
        for name in t.used_models()
        if t.config.providers[t.provider_of(name)].type not in FREE_TYPES
        and t.provider_model_id(name) not in prices
    ]


def unpriced_budget_problems(t: Tournament, budget_usd: float | None = None) -> list[str]:
    """Why a budget cannot bind (models it would count at $0), unless `unpriced: allow`."""
    budgets = [f"budget_usd: {t.config.budget_usd:g}"] if t.config.budget_usd is not None else []
    budgets += [f"--budget {budget_usd:g}"] if budget_usd is not None else []
    if not budgets or t.config.unpriced == "allow":
        return []
    return [
        f"models.{name}: no price for model '{t.provider_model_id(name)}' "
        f"(provider '{t.provider_of(name)}'), so {' and '.join(budgets)} would count its "
        f"calls as $0 and never stop them: give its price under `prices:` "
        f"(prices: {{{t.provider_model_id(name)}: {{input: USD, output: USD}}}}, per "
        "million tokens; 0 for free), or set `unpriced: allow` to run it uncounted"
        for name in unpriced_models(t)
    ]


# Seconds the calls in flight get to finish after a first SIGINT / SIGTERM (`--grace`).
DEFAULT_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class RunOptions:
    """One run's settings: every flag of `arena run` (its `--json` is only how the CLI
    prints the result), used by `arena.run()` and the CLI alike.

    `out`: the output directory (default: the YAML's `output`, else runs/<name>);
    `limit`: only the first N questions (a smoke run: no history snapshot);
    `shard`: "K/N", (K, N) or a `Shard`; `batch`: the SDK providers' batch APIs;
    `budget`: this run's limit in USD; `grace`: seconds the calls in flight get
    after a first SIGINT / SIGTERM; `tag`: the history snapshot's name.
    """

    out: Path | None = None
    limit: int | None = None
    shard: str | tuple[int, int] | Shard | None = None
    batch: bool = False
    budget: float | None = None
    grace: float = DEFAULT_GRACE_SECONDS
    tag: str | None = None

    def __post_init__(self) -> None:
        budget = self.budget
        if budget is not None and (not math.isfinite(budget) or budget < 0):
            raise ArenaInputError(
                f"budget: {budget} is not a budget: give a finite amount >= 0 USD"
            )
        if self.limit is not None and self.limit < 1:
            raise ArenaInputError(f"limit: {self.limit} is not a number of questions >= 1")
        if not (math.isfinite(self.grace) and self.grace >= 0):
            raise ArenaInputError(f"grace: {self.grace} is not a number of seconds >= 0")

    @property
    def history(self) -> bool:
        """Whether the run may add a history snapshot (not a `limit` smoke run)."""
        return self.limit is None

    def requested_shard(self) -> Shard | None:
        """`shard` as a `Shard`; ArenaInputError naming the problem."""
        if self.shard is None or isinstance(self.shard, Shard):
            return self.shard
        text = self.shard if isinstance(self.shard, str) else f"{self.shard[0]}/{self.shard[1]}"
        try:
            return parse_shard(text)
        except ValueError as exc:
            raise ArenaInputError(f"shard: {exc}") from None


def _say_nothing(line: str) -> None:
    pass


def prepare_run(
    config: Path | Tournament,
    options: RunOptions,
    *,
    warn: Callable[[str], None] = _say_nothing,
    note: Callable[[str], None] = _say_nothing,
) -> Tournament:
    """The tournament a run of `config` with `options` runs, checked before any call.

    In order: the shard asked for, the YAML (ConfigError), `limit` and
    `batch`, the answer files' problems (`warn`), the shard the directory
    holds (a shard's directory continues its shard: `note`), the preflight
    (raises `PreflightError` listing every problem) and, under a budget, the
    models counted as $0 (`warn`). `arena run` and `arena.run()` both start here.
    """
    wanted = options.requested_shard()
    if isinstance(config, Tournament):
        t = config if options.out is None else replace(config, output_dir=Path(options.out))
    else:
        t = load_tournament(Path(config), None if options.out is None else Path(options.out))
    if options.limit is not None:
        t = t.limited(options.limit)
    if options.batch:
        t = t.batched()
    for line in t.answer_file_problems():
        warn(line)
    t = shard_for_directory(t, wanted)  # another shard than the directory's: ConfigError
    if wanted is None and t.shard is not None:
        note(
            f"{t.output_dir} holds shard {t.shard[0]}/{t.shard[1]} "
            "(its tournament.json): running that shard"
        )
    problems = preflight(t, budget_usd=options.budget)  # a budget with an unpriced model
    if problems:
        raise PreflightError(t.path, problems)
    if options.budget is not None or t.config.budget_usd is not None:
        for name in unpriced_models(t):  # left only with `unpriced: allow`
            warn(
                f"no price for model '{name}' ({t.provider_model_id(name)}): "
                "`unpriced: allow` counts its calls as $0 against the budget"
            )
    return t


async def run_tournament(
    t: Tournament,
    *,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
    compact_every: int = 2000,
    plan: Plan | None = None,
    extra_stages: bool = True,
    window: int | None = None,
    record_config: bool = True,
    run_id: str | None = None,
) -> RunSummary:
    """Run every pending call of a tournament; the caller holds the run lock.

    `plan` defaults to `build_plan(t)`; `arena retry-failed` passes part of it
    with `extra_stages=False` (no discussion, BatchEval... on a partial plan).
    `window` bounds the calls in flight (default: `default_window` of the
    providers' limits). Without `record_config`, tournament.json keeps the
    YAML path it records (retry-failed). `run_id` goes into every logged row (the
    run record's id, so that the spend of a run joins its record).
    """
    write_snapshot(t, keep_config_path=not record_config)
    plan = plan if plan is not None else build_plan(t)
    base = AllPairsPlanner(t, plan, review_selector(t, plan) if extra_stages else None)
    planners: list[Planner] = [base]
    if extra_stages:
        planners.extend(stage_planners(t, base))
    summary = await run_planners(
        planners,
        tournament_setup(t),
        budget_usd=budget_usd,
        progress=progress,
        on_scheduler=on_scheduler,
        compact_every=compact_every,
        window=window,
        run_id=run_id,
    )
    summary.sampling = base.selection_report()
    return summary


@dataclass(frozen=True)
class DirectoryRun:
    """What `run_directory` did: the summary, the plan's state at the start, the history note."""

    summary: RunSummary
    start: RunStart
    plan: Plan  # the whole plan (DIR/plan.parquet)
    ran: Plan  # the calls this run went through (part of `plan` for retry-failed)
    blocked: int  # retry-failed: reviews a failed answer had kept from running
    history: str | None  # why no leaderboard snapshot was appended (None: appended or n/a)


def run_directory(
    t: Tournament,
    *,
    retry_failed: bool = False,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_loop: Callable[[], None] | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
    interrupted: Callable[[], bool] = lambda: False,
    window: int | None = None,
    history: bool = True,
    run_id: str | None = None,
    tag: str | None = None,
) -> DirectoryRun:
    """`arena run` (or `arena retry-failed`) in the tournament's output directory.

    Holds the run lock (raises `LockHeld`; ConfigError when DIR holds another shard, see
    `arena.shard.check_directory`), writes DIR/plan.parquet before any
    call (retry-failed: raises `PlanChanged` when the plan changed), runs the
    calls in an event loop of its own (`on_loop` runs first inside it, e.g. to
    install signal handlers), and after a run that went through its plan (not
    `interrupted`, not stopped by the budget) appends the leaderboard to DIR's
    history (unless `history` is False: a smoke run of the first questions).
    """
    release_memory_promptly()  # a long run's peak is its end (arena.runtime)
    if run_id is None:  # one id for the log rows, the history and the record
        from arena.ops import new_run_id

        run_id = new_run_id()
    with RunLock(t.output_dir):
        check_shard_directory(t)  # never run (nor record) another shard over a shard's calls
        plan = build_plan(t)
        start = start_run(t, plan, same_plan=retry_failed)
        ran, blocked = failed_only(plan, start) if retry_failed else (plan, 0)
        start = start.compact()  # the counts; the plan's frame is not kept through the run

        async def execute() -> RunSummary:
            if on_loop is not None:
                on_loop()
            return await run_tournament(
                t,
                budget_usd=budget_usd,
                progress=progress,
                on_scheduler=on_scheduler,
                plan=ran,
                extra_stages=not retry_failed,
                window=window,
                record_config=not retry_failed,
                run_id=run_id,
            )

        summary = asyncio.run(execute())
        trim_heap()  # what the calls freed, before the history snapshot reads the log
        summary.interrupted = interrupted()
        if summary.storage_error is None:
            write_last_run(t, "retry-failed" if retry_failed else "run", summary)
        recorded: str | None = None
        went_through = (
            not summary.interrupted and not summary.budget_stopped and summary.storage_error is None
        )
        if history and went_through and ran.size:  # nothing retried: nothing new to remember
            recorded = record_history(
                t,
                plan,
                "retry-failed" if retry_failed else "run",
                lambda: leaderboard_dict(
                    # a shard's own history ranks that shard alone
                    build_leaderboard(t.output_dir, ratings_only=True, allow_missing_shards=True)
                ),
                start=None if retry_failed else start,  # stale calls this run made again
                run_id=run_id,
                tag=tag,
                added=summary.completed + summary.failed + summary.invalid > 0,
                calls_open=_open_after(plan, start, summary),
            )
            trim_heap()  # what the snapshot freed, before the night report reads the log
    return DirectoryRun(summary, start, plan, ran, blocked, recorded)


LAST_RUN = "last_run.json"


def write_last_run(t: Tournament, command: str, summary: RunSummary) -> None:
    """DIR/last_run.json: how the last run ended and why calls failed or stayed pending.

    `arena status` shows it: a budget stop or a deferral leaves nothing in the
    log (the calls stay pending), so this is where their reasons are kept.
    """
    record = {
        "command": command,
        "ended_at": time.time(),
        "budget_stopped": summary.budget_stopped,
        "interrupted": summary.interrupted,
        "pending": summary.pending,
        "errors": summary.errors,
    }
    tmp = t.output_dir / f"{LAST_RUN}.tmp"
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(t.output_dir / LAST_RUN)


def _open_after(plan: Plan, start: RunStart, summary: RunSummary) -> int:
    """Calls of the plan still failed, stale or pending after a run: those logged ok or
    invalid at the start, plus the answers and reviews this run logged so, are settled."""
    settled = start.count("done") + start.count("invalid")
    for stage in ("answers", "reviews"):
        counts = summary.by_stage.get(stage, {})
        settled += counts.get("completed", 0) + counts.get("invalid", 0)
    return plan.size - settled


def log_line(message: str) -> None:
    """A timestamped line on stderr (for non-terminal output)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"[{stamp}] {message}", file=sys.stderr, flush=True)


__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "LAST_RUN",
    "DirectoryRun",
    "RunOptions",
    "log_line",
    "preflight",
    "prepare_run",
    "run_directory",
    "run_tournament",
    "snapshot",
    "unpriced_budget_problems",
    "unpriced_models",
    "write_last_run",
    "write_snapshot",
]
