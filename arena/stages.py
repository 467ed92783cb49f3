"""The stages of a tournament beside answers and reviews: the one list, in run order.

Each line names a stage's `Stage` object (`arena.stage`) in its package's
`_hooks` module, imported on first use: a command that asks every stage for
its part (the leaderboard, `arena plan`, `arena status`) loads the hooks and
what they use, not the whole package (its standalone command, its prompts'
other tools). The engine, `arena plan`, `arena status` and the
nightly code iterate `all_stages()`; none of them names a stage. Adding a
stage is a package of its own and one line here. Order matters: planners run
in this order after the all-pairs planner, and `arena plan` / `arena status`
print the stages' notes in it.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.config import Tournament
    from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector
    from arena.runner import Planner
    from arena.stage import Stage

__all__ = [
    "COMMANDS",
    "REGISTRY",
    "all_stages",
    "preflight",
    "register_all_tables",
    "review_selector",
    "stage_planners",
]

# "module:attribute" of each stage's `Stage` object (its package's hooks module).
REGISTRY: tuple[str, ...] = (
    "arena.sampling._hooks:SAMPLING_STAGE",
    "arena.discuss._hooks:DISCUSSION_STAGE",
    "arena.batcheval._hooks:BATCHEVAL_STAGE",
)
# A stage's own command, in its package: command name -> "module:attribute".
# `arena.cli` lists them beside its own and imports one only when it runs; a
# stage package's `_cli` module belongs to the cli layer (tests/test_layers.py).
COMMANDS: dict[str, str] = {
    "discuss": "arena.discuss._cli:discuss_cmd",
    "batcheval": "arena.batcheval._cli:batcheval_cmd",
}


@cache
def all_stages() -> tuple[Stage, ...]:
    """Every registered stage (importing its hooks registers its log tables)."""
    from arena.stage import Stage

    out: list[Stage] = []
    for target in REGISTRY:
        module, _, attr = target.partition(":")
        stage = getattr(importlib.import_module(module), attr)
        if not isinstance(stage, Stage):
            raise TypeError(f"{target} is not a Stage")
        out.append(stage)
    return tuple(out)


def register_all_tables() -> None:
    """Register every stage's log tables with the store (`arena.store.TABLES`).

    A stage's tables are registered when its package is imported; code that
    loops over `TABLES` (export, gc, the failure summary, status) calls this
    first, so that no table is dropped because its package was not loaded yet.
    The scheduler's `batch_jobs` table (batch mode) is registered the same way.
    """
    importlib.import_module("arena.scheduler")
    all_stages()


def preflight(t: Tournament) -> list[str]:
    """Every stage's problems with its section, before any call."""
    return [problem for stage in all_stages() for problem in stage.preflight(t)]


def review_selector(t: Tournament, plan: Plan) -> ReviewSelector | None:
    """The selector of the reviews the all-pairs planner asks for (None: the whole plan)."""
    chosen = [s for s in (stage.selector(t, plan) for stage in all_stages()) if s is not None]
    if len(chosen) > 1:
        raise ValueError("more than one stage selects the reviews of this tournament")
    return chosen[0] if chosen else None


def stage_planners(t: Tournament, base: AllPairsPlanner) -> list[Planner]:
    """The planners of the stages whose sections are on, in registry order."""
    return [p for p in (stage.planner(t, base) for stage in all_stages()) if p is not None]
