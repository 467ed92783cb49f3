"""Discussion results of a run directory, for the leaderboard."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from arena.discuss._outcome import apply_discussions
from arena.discuss._schema import DISCUSSION_REVIEWER, TABLE
from arena.discuss._state import DiscussionState, read_state
from arena.discuss._stats import DiscussionStats, discussion_stats
from arena.store import RunLog

__all__ = ["DiscussionReport", "discussion_report", "read_discussions"]


@dataclass(frozen=True, eq=False)
class DiscussionReport:
    """A run directory's discussions: settings, statistics and the reviews to rank."""

    state: DiscussionState
    stats: DiscussionStats
    reviews: pl.DataFrame  # the reviews with the agreed verdicts applied (see apply_discussions)
    discussions: pl.DataFrame  # the discussions table (every context)

    def reviewers(self, base: Sequence[str] | None) -> list[str] | None:
        """The reviewers to rank `reviews` with: `base`, plus `(discussion)` for `add`."""
        if base is None or self.state.outcome != "add":
            return None if base is None else list(base)
        return [*base, DISCUSSION_REVIEWER]


def read_discussions(directory: Path) -> pl.DataFrame | None:
    """The discussions table of a run directory; None when it has no log."""
    if not (Path(directory) / "log").is_dir():
        return None
    return RunLog(directory).read(TABLE)


def discussion_report(directory: Path, reviews: pl.DataFrame) -> DiscussionReport | None:
    """Discussion statistics and the reviews the ranking should use; None without discussions."""
    state = read_state(Path(directory))
    table = read_discussions(Path(directory)) if state is not None else None
    if state is None or table is None:
        return None
    adjusted = apply_discussions(
        reviews,
        table,
        outcome="add" if state.outcome == "add" else "replace",
        weight=state.weight,
        context=state.context,
    )
    return DiscussionReport(state, discussion_stats(table, state.context), adjusted, table)
