"""PeerDiscussion as a stage of a tournament: what `arena.stages` asks of it."""

from __future__ import annotations

import math
from typing import Any

from arena.config import ConfigError, DiscussionConfig, Tournament
from arena.discuss._counts import discussion_counts
from arena.discuss._prompt import load_templates
from arena.discuss._schema import TABLE
from arena.discuss._stage import DiscussionStage
from arena.discuss._state import discussion_context, read_state
from arena.pipeline import AllPairsPlanner, Plan
from arena.stage import EstimateInputs, Stage, StageEstimate, StageStatus, StatusInputs

__all__ = ["DISCUSSION_STAGE", "DiscussionHooks"]


class DiscussionHooks(Stage):
    """The discussion stage: a planner when the tournament has a `discussion:` section."""

    name = "discussions"
    tables = (TABLE,)
    model_columns = {TABLE: "speaker"}
    plan_key = "discussion"

    def preflight(self, t: Tournament) -> list[str]:
        try:
            self.planner(t, AllPairsPlanner(t, Plan.empty()))  # checks templates and settings
        except ConfigError as exc:
            return [str(exc)]
        return []

    def planner(self, t: Tournament, base: AllPairsPlanner) -> DiscussionStage | None:
        return DiscussionStage(t, base) if t.config.discussion is not None else None

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        t, section = inputs.t, inputs.t.config.discussion
        if section is None:
            return StageEstimate()
        context = discussion_context(t, section, load_templates(section, t.path))
        logged = None if inputs.log is None else discussion_counts(inputs.log, context)
        bound = discussion_bound(t, section, logged)
        note = (
            f"discussion: depends on triggers; at most {bound['battles']} battles x "
            f"{bound['pairs']} pair(s) x 2 x ({bound['max_turns']} turns + 2 initial "
            f"reviews) = {bound['max_calls']} calls, not in the table or the estimates"
            + (
                "."
                if not logged
                else f"; logged: {logged['logged']} discussions "
                f"({logged['agreed']} agreed, {logged['unresolved']} unresolved)."
            )
        )
        return StageEstimate(block=bound, notes=[note])

    def status(self, inputs: StatusInputs) -> StageStatus:
        # Discussions of other settings than these are stale: the YAML's, else the last run's.
        t = inputs.t
        if t is not None and t.config.discussion is not None:
            section = t.config.discussion
            context: str | None = discussion_context(t, section, load_templates(section, t.path))
        else:
            state = read_state(inputs.directory)
            context = None if state is None else state.context
        d = discussion_counts(inputs.log, context)
        notes = []
        if any(d.values()):
            notes.append(
                f"discussions: {d['logged']} logged ({d['agreed']} agreed, {d['unresolved']} "
                f"unresolved, {d['in_progress']} in progress), {d['calls']} calls "
                f"({d['failed_calls']} failed)"
                + (f"; {d['stale']} more under older settings, not used" if d["stale"] else "")
            )
        return StageStatus(block=d, notes=notes)


def discussion_bound(
    t: Tournament, d: DiscussionConfig, logged: dict[str, int] | None
) -> dict[str, Any]:
    """The most calls discussions can make: every battle selected, every step asked twice.

    Each ordered battle of the plan may be selected, and is discussed by each
    pair of discussants; a discussion asks each discussant's initial review
    and at most max_turns turns, and re-asks any of them once when its
    preference cannot be read.
    """
    n = len(t.contestants)
    pairs = math.comb(len(d.named_discussants()), 2) if isinstance(d.discussants, dict) else 1
    if d.leader == "both":
        pairs *= 2  # each pair discusses each battle twice, once with each leading
    battles = len(t.questions) * n * (n - 1)
    return {
        "battles": battles,
        "pairs": pairs,
        "max_turns": d.max_turns,
        "max_calls": battles * pairs * 2 * (d.max_turns + 2),
        "logged": logged,
    }


DISCUSSION_STAGE = DiscussionHooks()
