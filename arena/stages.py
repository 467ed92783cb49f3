"""The parts of a tournament beside answers and reviews: the one registry, in run order.

`SELECTOR` names the review selector (a sampled design, `arena.sampling`) and
`REGISTRY` the stages, each a `"module:attribute"` of its `arena.stage.Part`
in its package, imported on first use: a command that asks every part for its
share (the leaderboard, `arena plan`, `arena status`) loads that module and
what it uses, not the whole package. The engine, `arena plan`, `arena
status` and the run-directory code iterate `all_parts()`; none of them names
a stage. Adding a stage is a package of its own and one line: here, or a call
of `register_stage("module:attribute")`. Loading a part registers what it
declares: its log tables with the store, its YAML section with the config
schema, its command with `arena`'s command list and its simulator behaviour
with the simulator. Order matters: planners run in registry order after the
all-pairs planner, and `arena plan` / `arena status` print the parts' notes
(the selector's first) in it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.config import Tournament
    from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector
    from arena.runner import Planner
    from arena.stage import Part, ReviewSelectorPart, Stage

__all__ = [
    "COMMANDS",
    "COMMAND_SUMMARIES",
    "REGISTRY",
    "SELECTOR",
    "all_parts",
    "all_stages",
    "preflight",
    "register_all_tables",
    "register_stage",
    "review_selector",
    "stage_planners",
]

# "module:attribute" of the review selector's `ReviewSelectorPart`.
SELECTOR = "arena.sampling._selection:SAMPLING_SELECTOR"
# "module:attribute" of each stage's `Stage` object (its package's `_stage` module).
REGISTRY: list[str] = [
    "arena.discuss._stage:DISCUSSION_STAGE",
    "arena.batcheval._stage:BATCHEVAL_STAGE",
]
# The parts' own commands, declared by each part (`Part.command`): command name ->
# "module:attribute" and its summary. `arena --help` lists them without loading any
# part, so the registry's lines are mirrored here (tests/test_stage_registry.py keeps
# this equal to what the parts declare); `register_stage` adds its stage's command.
COMMANDS: dict[str, str] = {
    "discuss": "arena.discuss._cli:discuss_cmd",
    "batcheval": "arena.batcheval._cli:batcheval_cmd",
}
COMMAND_SUMMARIES: dict[str, str] = {}

_loaded: list[Part] = []
_selector: list[ReviewSelectorPart] = []


def _load(target: str) -> Part:
    """Import one part and register what it declares (tables, section, command, simulator)."""
    from arena.stage import Part

    module, _, attr = target.partition(":")
    part = getattr(importlib.import_module(module), attr)
    if not isinstance(part, Part):
        raise TypeError(f"{target} is not an arena.stage.Part")
    if part.tables:
        from arena.store import register_table

        for table in part.tables:
            schema_module, _, schema_attr = table.schema.partition(":")
            register_table(table.name, getattr(importlib.import_module(schema_module), schema_attr))
    if part.section is not None:
        from arena.config import register_section

        register_section(part.section)
    if part.command is not None:
        COMMANDS.setdefault(part.command.name, part.command.target)
        COMMAND_SUMMARIES.setdefault(part.command.name, part.command.summary)
    if part.sim is not None:
        from arena.providers.sim import register_sim_responder

        register_sim_responder(part.sim)
    return part


def _selector_part() -> ReviewSelectorPart:
    from arena.stage import ReviewSelectorPart

    if not _selector:
        part = _load(SELECTOR)
        if not isinstance(part, ReviewSelectorPart):
            raise TypeError(f"{SELECTOR} is not an arena.stage.ReviewSelectorPart")
        _selector.append(part)
    return _selector[0]


def all_stages() -> tuple[Stage, ...]:
    """Every registered stage, in registry order (loading one registers what it declares)."""
    from arena.stage import Stage

    while len(_loaded) < len(REGISTRY):
        target = REGISTRY[len(_loaded)]
        part = _load(target)
        if not isinstance(part, Stage):
            raise TypeError(f"{target} is not an arena.stage.Stage")
        _loaded.append(part)
    return tuple(p for p in _loaded if isinstance(p, Stage))


def all_parts() -> tuple[Part, ...]:
    """The review selector, then every stage: what `arena plan`, `arena status` and the
    leaderboard ask for their share."""
    return (_selector_part(), *all_stages())


def register_stage(target: str) -> Stage:
    """Add the stage at "module:attribute" to the registry (after the others) and load it.

    Its log tables, YAML section, command and simulator behaviour are
    registered at once, so a tournament that uses its section loads. Adding
    the same stage again changes nothing.
    """
    if target not in REGISTRY:
        REGISTRY.append(target)
    stages = all_stages()
    return stages[REGISTRY.index(target)]


def register_all_tables() -> None:
    """Register every part's log tables with the store (`arena.store.TABLES`).

    Code that loops over `TABLES` (export, gc, the failure summary, status)
    calls this first, so that no table is dropped because its part was not
    loaded yet. The scheduler's `batch_jobs` table (batch mode) is registered
    the same way.
    """
    importlib.import_module("arena.scheduler")
    all_parts()


def preflight(t: Tournament) -> list[str]:
    """Every part's problems with its section, before any call."""
    return [problem for part in all_parts() for problem in part.preflight(t)]


def review_selector(t: Tournament, plan: Plan) -> ReviewSelector | None:
    """The selector of the reviews the all-pairs planner asks for (None: the whole plan)."""
    return _selector_part().run.selector(t, plan)


def stage_planners(t: Tournament, base: AllPairsPlanner) -> list[Planner]:
    """The planners of the stages whose sections are on, in registry order."""
    return [p for p in (stage.run.planner(t, base) for stage in all_stages()) if p is not None]
