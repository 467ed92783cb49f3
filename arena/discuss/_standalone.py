"""`arena discuss DIR`: discuss the battles of an existing tournament, from its log.

Only answers and reviews already logged are used; nothing else of the
tournament is run. A tournament without a `discussion:` section gets the
section's defaults.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from arena.config import Tournament, parse_config
from arena.discuss._planner import DiscussionPlanner
from arena.discuss._prompt import load_templates
from arena.pipeline import AllPairsPlanner, Plan, build_plan, load_done
from arena.runner import ProgressFn, RunSummary
from arena.scheduler import Scheduler
from arena.session import run_planners, tournament_setup
from arena.store import RunLog

__all__ = ["discuss_existing", "with_discussion"]


def with_discussion(t: Tournament, triggers: Sequence[str] = ()) -> Tournament:
    """The tournament with its discussion section (defaults when absent), `triggers` overriding.

    Raises ConfigError (naming the YAML and the key) when the result is not valid.
    """
    # keys at their defaults left out: the config reads back as written (a model with
    # `answers:` from a file refuses keys it does not use, defaults included)
    data = t.config.model_dump(exclude_defaults=True)
    section = dict(data.get("discussion") or {})
    if triggers:
        section["trigger"] = list(triggers)
    data["discussion"] = section
    cfg = parse_config(data, t.path)
    assert cfg.discussion is not None
    load_templates(cfg.discussion, t.path)
    return dataclasses.replace(t, config=cfg)


async def discuss_existing(
    t: Tournament,
    *,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
) -> RunSummary:
    """Discuss the selected battles of the logged reviews; the caller holds the run lock."""
    log = RunLog(t.output_dir)
    full = build_plan(t)
    done_answers, done_reviews = load_done(log)
    plan = Plan(
        tuple(a for a in full.answers if a.id in done_answers),
        full.reviews.take(
            [i for i, rid in enumerate(full.reviews.ids) if rid.decode() in done_reviews]
        ),
    )
    base = AllPairsPlanner(t, plan)
    return await run_planners(
        [base, DiscussionPlanner(t, base)],
        tournament_setup(t),
        budget_usd=budget_usd,
        progress=progress,
        on_scheduler=on_scheduler,
    )
