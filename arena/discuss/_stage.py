"""PeerDiscussion as a stage of a tournament: what `arena.stages` asks of it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.config import ConfigError
from arena.discuss._schema import STATE_FILE, TABLE
from arena.stage import (
    BoardText,
    EstimateInputs,
    Scores,
    Stage,
    StageBoard,
    StageCommand,
    StageEstimate,
    StageReport,
    StageRun,
    StageStatus,
    StageTable,
    StatusInputs,
)

if TYPE_CHECKING:
    from arena.config import DiscussionConfig, Tournament
    from arena.discuss._planner import DiscussionPlanner
    from arena.discuss._rundir import DiscussionReport
    from arena.pipeline import AllPairsPlanner

# The stage's modules load in the hook that uses them: the leaderboard asks
# this stage for a run's discussions (none: nothing more is loaded), `arena
# status` for their counts, `arena plan` for its bound.

__all__ = [
    "DISCUSSION_STAGE",
    "DiscussionBoard",
    "DiscussionBound",
    "DiscussionCounts",
    "DiscussionPlanStatus",
    "DiscussionRun",
    "discussion_bound",
]


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


class DiscussionRun(StageRun):
    """In `arena run`: the discussion planner when the tournament has a `discussion:` section."""

    def preflight(self, t: Tournament) -> list[str]:
        from arena.pipeline import AllPairsPlanner, Plan

        try:
            self.planner(t, AllPairsPlanner(t, Plan.empty()))  # checks templates and settings
        except ConfigError as exc:
            return [str(exc)]
        return []

    def planner(self, t: Tournament, base: AllPairsPlanner) -> DiscussionPlanner | None:
        if t.config.discussion is None:
            return None
        from arena.discuss._planner import DiscussionPlanner

        return DiscussionPlanner(t, base)


@dataclass(frozen=True)
class DiscussionCounts:
    """Discussions in the log (`discussion_counts`): how many, how they ended, their calls."""

    logged: int
    agreed: int
    unresolved: int
    in_progress: int
    stale: int
    calls: int
    failed_calls: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def note(self) -> str | None:
        """The line under `arena status` (None: no discussion logged)."""
        if not any(dataclasses.astuple(self)):
            return None
        return (
            f"discussions: {self.logged} logged ({self.agreed} agreed, {self.unresolved} "
            f"unresolved, {self.in_progress} in progress), {self.calls} calls "
            f"({self.failed_calls} failed)"
            + (f"; {self.stale} more under older settings, not used" if self.stale else "")
        )


@dataclass(frozen=True)
class DiscussionBound:
    """The most calls discussions can make (`discussion_bound`), and those logged so far."""

    battles: int
    pairs: int
    max_turns: int
    max_calls: int
    logged: DiscussionCounts | None

    def to_json(self) -> dict[str, Any]:
        return {
            "battles": self.battles,
            "pairs": self.pairs,
            "max_turns": self.max_turns,
            "max_calls": self.max_calls,
            "logged": None if self.logged is None else self.logged.to_json(),
        }

    def note(self) -> str:
        """The line under `arena plan`."""
        logged = self.logged
        return (
            f"discussion: depends on triggers; at most {self.battles} battles x "
            f"{self.pairs} pair(s) x 2 x ({self.max_turns} turns + 2 initial "
            f"reviews) = {self.max_calls} calls, not in the table or the estimates"
            + (
                "."
                if logged is None
                else f"; logged: {logged.logged} discussions "
                f"({logged.agreed} agreed, {logged.unresolved} unresolved)."
            )
        )


class DiscussionPlanStatus(StageReport):
    """In `arena plan`: the bound on discussion calls; in `arena status`: their counts."""

    plan_key = "discussion"

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
        return StageEstimate(block=bound, notes=[bound.note()])

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
        counts = DiscussionCounts(**discussion_counts(inputs.log, context))
        note = counts.note()
        return StageStatus(block=counts, notes=[] if note is None else [note])


class DiscussionBoard(StageBoard):
    """On the leaderboard: the ranking with the agreed discussion verdicts applied."""

    key = "discussion"
    title = "PeerDiscussion"

    def reviews(self, directories: Sequence[Path], reviews: pl.DataFrame) -> DiscussedBoard | None:
        report = merged_discussions(directories, reviews)
        return None if report is None else DiscussedBoard(report)

    def text(self, block: Mapping[str, Any]) -> BoardText:
        from arena.discuss._board import discussion_footer, discussion_tables

        return BoardText(discussion_tables(block), discussion_footer(block))


def discussion_bound(
    t: Tournament, d: DiscussionConfig, logged: dict[str, int] | None
) -> DiscussionBound:
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
    return DiscussionBound(
        battles=battles,
        pairs=pairs,
        max_turns=d.max_turns,
        max_calls=battles * pairs * 2 * (d.max_turns + 2),
        logged=None if logged is None else DiscussionCounts(**logged),
    )


DISCUSSION_STAGE = Stage(
    name="discussions",
    tables=(StageTable(TABLE, "arena.discuss._schema:TABLE_SCHEMA", model_column="speaker"),),
    run=DiscussionRun(),
    report=DiscussionPlanStatus(),
    board=DiscussionBoard(),
    command=StageCommand(
        "discuss",
        "arena.discuss._cli:discuss_cmd",
        "Discuss the disputed battles of the tournament in DIR, from its logged reviews.",
    ),
)
