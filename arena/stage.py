"""The `Stage` protocol: what a stage of a tournament declares, in its own package.

A stage (PeerDiscussion, BatchEval, a sampled review design, and later ones)
is one package that declares everything about itself in one `Stage` object:
its log tables, the problems to report before any call (`preflight`), its
planner in `arena run` (`planner`, or `selector` for a stage that chooses the
reviews the all-pairs planner asks for), its rows and block in `arena plan`
(`estimate`) and `arena status` (`status`). `arena.stages` lists the stages;
the engine, `arena plan`, `arena status` and the nightly code iterate that
list and name no stage. A stage's YAML section stays in the config schema
(`Tournament.config`); its hooks read it from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import polars as pl

if TYPE_CHECKING:  # annotations only: the leaderboard imports this without the engine
    from arena.config import Tournament
    from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector
    from arena.runner import Planner
    from arena.scheduler import PriceTable
    from arena.store import RunLog

__all__ = [
    "EXPECTED_SHARE",
    "BoardInputs",
    "BoardReviews",
    "BoardTable",
    "ModelCalls",
    "Scores",
    "Stage",
    "StageEstimate",
    "StageStatus",
    "EstimateInputs",
    "StatusInputs",
]


# With nothing logged yet, a call is expected to write this share of its max_tokens.
EXPECTED_SHARE = 0.5


@dataclass(frozen=True)
class ModelCalls:
    """Calls of one model that a stage adds to the `arena plan` table, in one state.

    `state` is the calls' state (`arena.rundir.STATES`): `done` or `invalid`
    (logged with a result: not asked again), `failed`, `stale` or `pending`.
    Tokens are the upper bound (`est_*`) and the expected (`exp_*`) input and
    output of all `count` calls (counted only for calls not logged yet).
    """

    model: str
    state: str
    count: int = 1
    est_in: int = 0
    est_out: int = 0
    exp_in: int = 0
    exp_out: int = 0


@dataclass
class EstimateInputs:
    """What `arena plan` knows when it asks the stages: the plan, the log, prices, states."""

    t: Tournament
    plan: Plan
    log: RunLog | None  # None: nothing logged yet
    prices: PriceTable
    # Upper-bound USD of each review of the plan not logged yet (None: unpriced), made on demand.
    pending_review_costs: Callable[[], list[float | None]]


@dataclass
class StageEstimate:
    """A stage's part of `arena plan`.

    `block` is its JSON value under the stage's `plan_key` (None: the stage is
    off). `calls` are counted in the table's `plan_column`; `notes` are
    printed under the table.
    """

    block: dict[str, Any] | None = None
    calls: list[ModelCalls] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class StatusInputs:
    """What `arena status` knows: the directory, its log, and the tournament when it has one."""

    directory: Path
    log: RunLog
    t: Tournament | None  # None: the YAML is gone (the plan comes from plan.parquet)
    plan: Plan | None


@dataclass
class StageStatus:
    """A stage's part of `arena status`.

    `calls` (columns `provider`, `state`) are the stage's planned calls, counted
    as rows of the status table (stage: the stage's `name`); their totals are
    its JSON block. Otherwise `block` is its JSON value under its `name`.
    `outside` counts logged calls that are not the plan's (`stale`, `unused`);
    `notes` are printed under the table.
    """

    block: Any = None
    calls: pl.DataFrame | None = None
    outside: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class BoardInputs:
    """What the leaderboard of run directories knows when it asks the stages for blocks.

    `directories` are the run directories ranked together (the shards of one
    tournament); `order` the board's contestants best first and `ratings`
    their Bradley-Terry ratings (models without one left out); `prepared` what
    the stage's `leaderboard_prepare` returned.
    """

    directories: list[Path]
    order: list[str]
    ratings: dict[str, float]
    seed: int
    prepared: Any = None


# A model's score in each ranking, by model.
Scores = Mapping[str, Mapping[str, float | None]]


class BoardReviews(Protocol):
    """The reviews a stage changes before the leaderboard ranks them (agreed discussions)."""

    @property
    def reviews(self) -> pl.DataFrame:
        """The reviews to rank, the stage's outcomes applied."""

    @property
    def calls(self) -> pl.DataFrame:
        """The stage's log rows (their cost counts for a reviews file)."""

    def reviewers(self, base: Sequence[str] | None) -> list[str] | None:
        """The reviewers of the changed reviews (`base` and the stage's own)."""

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
        """The stage's leaderboard block, from the rankings with and without its outcomes;
        `human`: the leaderboard's human labels (`--human`), when given, with the seed of
        the leaderboard's bootstrap."""


class BoardTable(Protocol):
    """One text table of a stage's leaderboard block (terminal, Markdown, HTML)."""

    @property
    def title(self) -> str: ...
    @property
    def header(self) -> list[str]: ...
    @property
    def rows(self) -> list[list[str]]: ...
    @property
    def notes(self) -> list[str]: ...


class Stage:
    """One stage of a tournament: every hook is optional.

    `name` is the stage's name in the run summary's `by_stage`, in `arena
    status` (rows and JSON key) and in the progress display. `tables` are its
    log tables (registered with the store when its package is imported);
    `model_columns` name, per table, the column of the model that made each
    call (for the failure summary of `arena status`). `plan_key` is its JSON
    key in `arena plan --json`; `plan_column`, when set, the table column that
    counts its calls.
    """

    name: ClassVar[str] = ""
    tables: ClassVar[tuple[str, ...]] = ()
    model_columns: ClassVar[Mapping[str, str]] = {}
    plan_key: ClassVar[str | None] = None
    plan_column: ClassVar[str | None] = None
    # The stage's key in the leaderboard JSON (None: it adds no block there).
    board_key: ClassVar[str | None] = None
    # Its tables of calls made on the run's answers, whose cost a leaderboard of
    # the run's reviews counts beside theirs.
    answer_cost_tables: ClassVar[tuple[str, ...]] = ()
    # The heading of its section in the HTML report.
    board_title: ClassVar[str] = ""

    def preflight(self, t: Tournament) -> list[str]:
        """Problems with the stage's section (templates, files) that would stop a run."""
        return []

    def planner(self, t: Tournament, base: AllPairsPlanner) -> Planner | None:
        """The stage's planner in `arena run` (None: its section is off)."""
        return None

    def selector(self, t: Tournament, plan: Plan) -> ReviewSelector | None:
        """The review selector the all-pairs planner uses (None: every review of the plan)."""
        return None

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        """The stage's part of `arena plan`."""
        return StageEstimate()

    def status(self, inputs: StatusInputs) -> StageStatus:
        """The stage's part of `arena status`."""
        return StageStatus()

    def leaderboard_design(self, directory: Path, reviews: pl.DataFrame) -> dict[str, Any] | None:
        """The review design the run's log records (None: every review was asked).

        Returned by at most one stage, it goes under the stage's `board_key`;
        the win rates are then balanced unless the user chose otherwise.
        """
        return None

    def leaderboard_prepare(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Any:
        """What the stage's leaderboard options need, checked before ranking.

        `options` are the leaderboard's stage options (such as `human_scores`);
        bad input raises `arena.config.ConfigError`.
        """
        return None

    def leaderboard_block(self, inputs: BoardInputs) -> dict[str, Any] | None:
        """The stage's block of a run directory's leaderboard, under `board_key` (None: none)."""
        return None

    def leaderboard_reviews(
        self, directories: Sequence[Path], reviews: pl.DataFrame
    ) -> BoardReviews | None:
        """The run's reviews with the stage's outcomes applied (None: it changes none).

        Bad or inconsistent input raises `arena.config.ConfigError`.
        """
        return None

    def leaderboard_tables(self, block: Mapping[str, Any]) -> Sequence[BoardTable]:
        """The stage's block as text tables, for the terminal, Markdown and HTML boards."""
        return []

    def leaderboard_footer(self, block: Mapping[str, Any]) -> list[str]:
        """Lines under the board that say what the stage did to the ranking."""
        return []
