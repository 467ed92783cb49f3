"""PeerDiscussion as a stage of a tournament: what `arena.stages` asks of it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.config import ConfigError
from arena.discuss._schema import STATE_FILE, TABLE
from arena.stage import (
    EstimateInputs,
    Scores,
    Stage,
    StageEstimate,
    StageStatus,
    StatusInputs,
)

if TYPE_CHECKING:
    from arena.config import DiscussionConfig, Tournament
    from arena.discuss._board import DiscussionTable
    from arena.discuss._rundir import DiscussionReport
    from arena.discuss._stage import DiscussionStage
    from arena.pipeline import AllPairsPlanner

# The stage's modules load in the hook that uses them: the leaderboard asks
# this stage for a run's discussions (none: nothing more is loaded), `arena
# status` for their counts, `arena plan` for its bound.

__all__ = ["DISCUSSION_STAGE", "DiscussionHooks"]


@dataclass
class DiscussedBoard:
    """A run's reviews with the agreed discussion verdicts applied, for the leaderboard."""

    report: DiscussionReport

    @property
    def reviews(self) -> pl.DataFrame:
        return self.report.reviews

    @property
    def calls(self) -> pl.DataFrame:
        return self.report.discussions

    def reviewers(self, base: Sequence[str] | None) -> list[str] | None:
        return self.report.reviewers(base)

    def block(
        self,
        order_with: Sequence[str],
        scores_with: Scores,
        order_without: Sequence[str],
        scores_without: Scores,
        tau_without: Mapping[str, float | None] | None,
        *,
        human: pl.DataFrame | None = None,
        seed: int = 0,
    ) -> dict[str, Any]:
        from arena.discuss._board import discussion_block

        block = discussion_block(
            self.report, order_with, scores_with, order_without, scores_without, tau_without
        )
        if human is not None:
            # as `arena discuss --human`: the discussions of the run's settings only
            from arena.discuss._accuracy import discussion_accuracy

            block["human_accuracy"] = discussion_accuracy(
                self.report.discussions, human, context=self.report.state.context, seed=seed
            )
        return block


def merged_discussions(
    directories: Sequence[Path], reviews: pl.DataFrame
) -> DiscussionReport | None:
    """The discussions of several shard directories, applied to their merged reviews."""
    if not any((Path(d) / STATE_FILE).is_file() for d in directories):
        return None  # no discussion ever ran there (read_state): the rest stays unloaded
    from arena.discuss._rundir import DiscussionReport, discussion_report, read_discussions
    from arena.discuss._state import read_state

    if len(directories) == 1:
        return discussion_report(directories[0], reviews)
    states = {d: read_state(d) for d in directories}
    present = {d: s for d, s in states.items() if s is not None}
    if not present:
        return None
    first_dir, state = next(iter(present.items()))
    for directory, other in present.items():
        if other != state:
            raise ConfigError(
                directory, "", f"discussion settings differ from those of {first_dir}"
            )
    tables = [t for t in (read_discussions(d) for d in directories) if t is not None]
    table = pl.concat(tables, how="diagonal_relaxed")
    from arena.discuss._outcome import apply_discussions
    from arena.discuss._stats import discussion_stats

    adjusted = apply_discussions(
        reviews,
        table,
        outcome="add" if state.outcome == "add" else "replace",
        weight=state.weight,
        context=state.context,
    )
    return DiscussionReport(state, discussion_stats(table, state.context), adjusted, table)


class DiscussionHooks(Stage):
    """The discussion stage: a planner when the tournament has a `discussion:` section."""

    name = "discussions"
    tables = (TABLE,)
    model_columns = {TABLE: "speaker"}
    plan_key = "discussion"
    board_key = "discussion"
    board_title = "PeerDiscussion"

    def leaderboard_reviews(
        self, directories: Sequence[Path], reviews: pl.DataFrame
    ) -> DiscussedBoard | None:
        report = merged_discussions(directories, reviews)
        return None if report is None else DiscussedBoard(report)

    def leaderboard_tables(self, block: Mapping[str, Any]) -> list[DiscussionTable]:
        from arena.discuss._board import discussion_tables

        return discussion_tables(block)

    def leaderboard_footer(self, block: Mapping[str, Any]) -> list[str]:
        from arena.discuss._board import discussion_footer

        return discussion_footer(block)

    def preflight(self, t: Tournament) -> list[str]:
        from arena.pipeline import AllPairsPlanner, Plan

        try:
            self.planner(t, AllPairsPlanner(t, Plan.empty()))  # checks templates and settings
        except ConfigError as exc:
            return [str(exc)]
        return []

    def planner(self, t: Tournament, base: AllPairsPlanner) -> DiscussionStage | None:
        if t.config.discussion is None:
            return None
        from arena.discuss._stage import DiscussionStage

        return DiscussionStage(t, base)

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        t, section = inputs.t, inputs.t.config.discussion
        if section is None:
            return StageEstimate()
        from arena.discuss._counts import discussion_counts
        from arena.discuss._prompt import load_templates
        from arena.discuss._state import discussion_context

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
        from arena.discuss._counts import discussion_counts
        from arena.discuss._prompt import load_templates
        from arena.discuss._state import discussion_context, read_state

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
