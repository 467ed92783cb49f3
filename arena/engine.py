"""Running a tournament: preflight checks, the run snapshot, and every stage in order.

The pipeline (answers and reviews, `arena.pipeline`) runs with the extra
stages plugged in (`STAGES`: PeerDiscussion), then BatchEval scores the
answers when configured.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from arena.batcheval import batcheval_preflight, score_tournament
from arena.config import ConfigError, Tournament
from arena.discuss import discussion_stage
from arena.pipeline import (
    AnswerCall,
    Pipeline,
    Plan,
    ProgressFn,
    ReviewCall,
    RunSummary,
    StageFactory,
    build_plan,
    load_done,
    load_verdicts,
    make_providers,
)
from arena.providers import ProviderUnavailable, create_provider
from arena.scheduler import Scheduler, price_table
from arena.store import RunLog

# Stages run by `arena run` alongside answers and reviews; each factory returns
# None when its section is off in the tournament.
STAGES: list[StageFactory] = [discussion_stage]


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
    return {
        "name": t.name,
        "config_hash": t.config_hash(),
        "contestants": t.contestants,
        "reviewers": t.reviewers,
        "questions": len(t.questions),
        "models": models,
        # `arena retry-failed DIR` and `arena status DIR` reload the config from here.
        "config_path": str(t.path.resolve()),
    }


def write_snapshot(t: Tournament) -> None:
    """Write tournament.json atomically."""
    t.output_dir.mkdir(parents=True, exist_ok=True)
    tmp = t.output_dir / "tournament.json.tmp"
    tmp.write_text(json.dumps(snapshot(t), indent=2))
    tmp.replace(t.output_dir / "tournament.json")


def preflight(t: Tournament) -> list[str]:
    """Every problem that would stop the run (unknown type, missing SDK or key), before any call."""
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
    problems.extend(batcheval_preflight(t))
    try:
        price_table(t)
    except ConfigError as exc:
        problems.append(str(exc))
    for factory in STAGES:  # making a stage checks its section (templates, ...)
        try:
            factory(t)
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def unpriced_models(t: Tournament) -> list[str]:
    """Models of real (non-sim) providers that have no price: free as far as a budget knows."""
    prices = price_table(t)
    return [
        name
        for name in t.used_models()
        if t.config.providers[t.provider_of(name)].type != "sim"
        and t.provider_model_id(name) not in prices
    ]


async def run_tournament(
    t: Tournament,
    *,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
    compact_every: int = 2000,
    plan: Plan | None = None,
    extra_stages: bool = True,
) -> RunSummary:
    """Run every pending call of a tournament; the caller holds the run lock.

    `plan` defaults to `build_plan(t)`; `arena retry-failed` passes part of it
    with `extra_stages=False` (no discussion, BatchEval... on a partial plan).
    """
    write_snapshot(t)
    log = RunLog(t.output_dir)
    plan = plan if plan is not None else build_plan(t)
    done_answers, done_reviews = load_done(log)
    factories = STAGES if extra_stages else []
    stages = [s for s in (factory(t) for factory in factories) if s is not None]
    done_verdicts = load_verdicts(log) if stages else {}
    providers = make_providers(t)
    limits = {name: t.config.providers[name].limits.to_limits() for name in providers}
    scheduler = Scheduler(
        providers, limits, t.config.retry, budget_usd=budget_usd, prices=price_table(t)
    )
    if on_scheduler is not None:
        on_scheduler(scheduler)
    try:
        async with log.writer(compact_every=compact_every) as writer:
            pipeline = Pipeline(
                t,
                plan,
                scheduler,
                writer,
                done_answers,
                done_reviews,
                progress,
                stages,
                done_verdicts,
            )
            summary = await pipeline.run()
            # The BatchEval stage (docs/batcheval.md), when configured: it scores
            # every answer once no answer is pending.
            stage = (
                None
                if not extra_stages
                else await score_tournament(
                    t,
                    [(a.id, a.question, a.model) for a in plan.answers],
                    pipeline.answers,
                    scheduler,
                    writer,
                    log,
                    run_id=pipeline.run_id,
                    progress=progress,
                )
            )
            if stage is not None:
                for key, value in stage.counts().items():
                    setattr(summary, key, getattr(summary, key) + value)
                summary.by_stage["batcheval"] = stage.counts()
                summary.errors.extend(stage.errors)
                summary.wall_seconds += stage.wall_seconds
                summary.spent_usd = scheduler.spent_usd
                summary.budget_stopped = scheduler.budget_exhausted
    finally:
        for p in providers.values():
            await p.close()
    return summary


def log_line(message: str) -> None:
    """A timestamped line on stderr (for non-terminal output)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"[{stamp}] {message}", file=sys.stderr, flush=True)


__all__ = [
    "STAGES",
    "AnswerCall",
    "Pipeline",
    "Plan",
    "ProgressFn",
    "ReviewCall",
    "RunSummary",
    "build_plan",
    "load_done",
    "load_verdicts",
    "log_line",
    "make_providers",
    "preflight",
    "run_tournament",
    "snapshot",
    "unpriced_models",
    "write_snapshot",
]
