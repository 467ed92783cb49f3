"""A leaderboard: a ranked review set with everything its renderers show, and how to rank."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank import Agreement, BaselineRate, LengthControl, Ranking
from arena.report._categories import CategoryRanking

__all__ = ["RANKINGS", "STYLE_RANKING", "Leaderboard", "LeaderboardOptions"]

FloatArray = NDArray[np.float64]

# The rankings every leaderboard reports, by JSON name.
RANKINGS = ("win_rate", "weighted_win_rate", "elo", "bt")


@dataclass(frozen=True)
class LeaderboardOptions:
    """How to rank: the CLI's options (defaults as documented).

    `weights`: "peerrank" or "equal" reviewer weights; `exclude_self`: leave
    out the reviews of a reviewer's own battles (`--no-self`).
    """

    anchor: str | None = None
    elo_orders: int = 100
    bootstrap: int = 200
    seed: int = 0
    weights: str = "reliability"
    exclude_self: bool = False
    # Opponent-balanced win rates (rank.RankOptions.balanced); None: on for a
    # run directory whose reviews come from a sampled design.
    balanced: bool | None = None
    # Report each model's win rate against this model (`vs_baseline`).
    baseline: str | None = None
    # Bradley-Terry intervals: "sandwich" (cluster-robust by question) or "bootstrap".
    intervals: str = "sandwich"
    # Bootstrap rounds for an Elo interval (0: none; see rank.RankOptions).
    elo_bootstrap: int = 0
    # Human-agreement conventions (rank.HUMAN_MERGES, MAJORITIES, KAPPA_CATEGORIES;
    # rank.AGREEMENT_CONVENTIONS["prd"] are the PRD paper's).
    human_merge: str = "plurality"
    majority: str = "plurality"
    kappa_categories: str = "model"
    # With `baseline`: each model's length-controlled win rate against it
    # (rank.length_controlled_win_rates; the JSON `lc_*` fields of `vs_baseline`).
    length_control: bool = False
    # --length-control's question difficulties: read from this table file
    # (rank.load_difficulty_table), or computed from the models imported and
    # saved to `save_difficulty` (rank.reference_difficulty); neither: none.
    difficulty: Path | None = None
    save_difficulty: Path | None = None
    # A review read twice from --reviews files: count the "last" copy, the "first",
    # "all", or refuse ("error") (report.DUPLICATES; a JSON warning counts them).
    duplicates: str = "last"
    # MT-bench records' two games: two reviews ("separate") or FastChat's one ("merged").
    games: str = "separate"


# The stages' blocks that are fields of the board, in the JSON where they always were.
_STAGE_FIELDS = ("discussion", "batcheval", "sampling")


@dataclass(eq=False)
class Leaderboard:
    """A ranked review set with everything the renderers show."""

    source: str
    ranking: Ranking
    # Contestant indices: by group, then rank (`ranking.default_ranks`: Bradley-Terry,
    # style-controlled where the style effect is significant); unranked last.
    order: list[int]
    anchor: str | None = None
    true_order: list[str] | None = None
    kendall_tau: dict[str, float] | None = None
    agreement: Agreement | None = None
    cost_usd: float | None = None
    warnings: list[str] = field(default_factory=list)
    discussion: dict[str, Any] | None = None  # docs/discussion.md (the JSON `discussion`)
    batcheval: dict[str, Any] | None = None  # docs/batcheval.md (the JSON `batcheval`)
    by_category: list[CategoryRanking] | None = None  # --by category (the JSON `by_category`)
    sampling: dict[str, Any] | None = None  # docs/sampling.md (the JSON `sampling`)
    vs_baseline: list[BaselineRate] | None = None  # --baseline MODEL (the JSON `vs_baseline`)
    baseline: str | None = None
    # Shards missing from a split run (--allow-missing-shards): the JSON `partial`.
    partial: dict[str, Any] | None = None
    # --length-control: the length-controlled win rates against the baseline.
    length_control: LengthControl | None = None
    # The blocks of stages without a field of their own (arena.stage.StageBoard), by key.
    stage_blocks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def stage_block(self, key: str) -> dict[str, Any] | None:
        """A stage's block on the board (`discussion`, `batcheval`, `sampling`, ...)."""
        if key in _STAGE_FIELDS:
            block: dict[str, Any] | None = getattr(self, key)
            return block
        return self.stage_blocks.get(key)

    def set_block(self, key: str, block: dict[str, Any]) -> None:
        """Put a stage's block on the board, under its key."""
        if key in _STAGE_FIELDS:
            setattr(self, key, block)
        else:
            self.stage_blocks[key] = block

    @property
    def contestants(self) -> tuple[str, ...]:
        """Contestant names in code order."""
        return self.ranking.reviews.contestants

    def scores(self, name: str) -> FloatArray:
        """One score per contestant (code order) for a ranking in RANKINGS."""
        r = self.ranking
        if name == "win_rate":
            return r.peerrank.win_rate
        if name == "weighted_win_rate":
            return r.peerrank.weighted_win_rate
        if name == "elo":
            if r.elo is None:
                return np.full(len(self.contestants), np.nan)
            return np.where(r.counts.battles > 0, r.elo.rating, np.nan)
        if name == "bt":
            return r.bt.rating
        raise KeyError(name)


# The style-controlled Bradley-Terry rating, where Kendall tau lists it.
STYLE_RANKING = "bt_style"
