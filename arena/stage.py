"""The `Stage` protocol, in typed parts: what a part of a tournament declares in its package.

A part of a tournament beyond answers and reviews is one package that
declares everything about itself in one object: a `Stage` (PeerDiscussion,
BatchEval: it plans calls of its own in `arena run`) or the `ReviewSelector`
part (a sampled review design: it chooses which reviews the all-pairs planner
asks for). Both are a `Part`:

- `name` and `tables`: its name (run summary, `arena status` rows and JSON
  key) and the log tables it writes (`StageTable`);
- `run`: what it plans (`StageRun.planner`) or selects (`SelectorRun.selector`),
  and the problems that stop a run before any call (`preflight`);
- `report`: what it adds to `arena plan` and `arena status` (`StageReport`,
  returning `StageEstimate` / `StageStatus`);
- `board`: what it adds to the leaderboard (`StageBoard`);
- `section`, `command`, `sim`: its YAML section (`arena.config.StageSection`),
  its own command (`StageCommand`) and its simulator behaviour
  (`arena.providers.sim.SimResponder`), registered from its package by
  `arena.stages` when the part is loaded.

Every part but `name` is optional. `arena.stages` lists the parts; the
engine, `arena plan`, `arena status` and the leaderboard iterate that list
and name no stage. Results are typed: a block is an object with `to_json()`
(`JsonBlock`), whose dict is the part's JSON value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

if TYPE_CHECKING:  # annotations only: the leaderboard imports this without the engine
    from arena.config import StageSection, Tournament
    from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector
    from arena.providers.sim import SimResponder
    from arena.runner import Planner
    from arena.scheduler import PriceTable
    from arena.store import RunLog

__all__ = [
    "EXPECTED_SHARE",
    "BoardInputs",
    "BoardReviews",
    "BoardTable",
    "BoardText",
    "EstimateInputs",
    "JsonBlock",
    "ModelCalls",
    "Part",
    "ReviewSelectorPart",
    "Scores",
    "SelectorRun",
    "Stage",
    "StageBoard",
    "StageCommand",
    "StageEstimate",
    "StageReport",
    "StageRun",
    "StageStatus",
    "StageTable",
    "StatusInputs",
]


# With nothing logged yet, a call is expected to write this share of its max_tokens.
EXPECTED_SHARE = 0.5


class JsonBlock(Protocol):
    """A typed result whose JSON value is `to_json()` (a part's block in plan, status)."""

    def to_json(self) -> dict[str, Any]:
        """The block as plain JSON data."""


# --- what it writes and what it brings --------------------------------------


@dataclass(frozen=True)
class StageTable:
    """A log table a part writes (its schema registered with `arena.store.register_table`).

    `schema` is the "module:attribute" of its `TableSchema`, imported (and the
    table registered) when the part is loaded. `model_column` names the model
    that made each call (the failure summary of `arena status`); `on_answers`:
    its calls are made on the run's answers, and a leaderboard of the run's
    reviews counts their cost beside theirs.
    """

    name: str
    schema: str
    model_column: str | None = None
    on_answers: bool = False


@dataclass(frozen=True)
class StageCommand:
    """A part's own command: `arena NAME`, the click command at `target` ("module:attribute").

    The module is the package's `_cli.py`, which counts as the cli layer;
    `summary` is the first sentence of its help (`arena --help` lists it
    without importing the command).
    """

    name: str
    target: str
    summary: str


# --- what it plans or selects ------------------------------------------------


class StageRun:
    """What a stage runs in `arena run`: its planner after the all-pairs planner."""

    def preflight(self, t: Tournament) -> list[str]:
        """Problems with the stage's section (templates, files) that would stop a run."""
        return []

    def planner(self, t: Tournament, base: AllPairsPlanner) -> Planner | None:
        """The stage's planner (None: its section is off); it reads `base`'s answers."""
        return None


class SelectorRun:
    """What the review selector does in `arena run`: choose the all-pairs planner's reviews."""

    def preflight(self, t: Tournament) -> list[str]:
        """Problems with the selector's section that would stop a run."""
        return []

    def selector(self, t: Tournament, plan: Plan) -> ReviewSelector | None:
        """The selector of the reviews to ask for (None: every review of the plan)."""
        return None


# --- what it adds to `arena plan` and `arena status` ---------------------------


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
    """What `arena plan` knows when it asks the parts: the plan, the log, prices, states."""

    t: Tournament
    plan: Plan
    log: RunLog | None  # None: nothing logged yet
    prices: PriceTable
    # Upper-bound USD of each review of the plan not logged yet (None: unpriced), made on demand.
    pending_review_costs: Callable[[], list[float | None]]


@dataclass
class StageEstimate:
    """A part's share of `arena plan`.

    `block` is its JSON value under the report's `plan_key` (None: the part is
    off). `calls` are counted in the table's `plan_column`; `notes` are
    printed under the table.
    """

    block: JsonBlock | None = None
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
    """A part's share of `arena status`.

    `calls` (columns `provider`, `state`) are the part's planned calls, counted
    as rows of the status table (stage: the part's `name`); their totals are
    its JSON block. Otherwise `block` is its JSON value under its `name`
    (None: `null`). `outside` counts logged calls that are not the plan's
    (`stale`, `unused`); `notes` are printed under the table.
    """

    block: JsonBlock | None = None
    calls: pl.DataFrame | None = None
    outside: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)


class StageReport:
    """What a part adds to `arena plan` (under `plan_key`) and `arena status` (under its name).

    `plan_column`, when set, is the plan table's column that counts its calls.
    """

    plan_key: str = ""
    plan_column: str | None = None

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        """The part's share of `arena plan`."""
        return StageEstimate()

    def status(self, inputs: StatusInputs) -> StageStatus:
        """The part's share of `arena status`."""
        return StageStatus()


# --- what it adds to the leaderboard ------------------------------------------


@dataclass
class BoardInputs:
    """What the leaderboard of run directories knows when it asks a part for its block.

    `directories` are the run directories ranked together (the shards of one
    tournament); `order` the board's contestants best first and `ratings`
    their Bradley-Terry ratings (models without one left out); `prepared` what
    the part's `prepare` returned.
    """

    directories: list[Path]
    order: list[str]
    ratings: dict[str, float]
    seed: int
    prepared: Any = None


# A model's score in each ranking, by model.
Scores = Mapping[str, Mapping[str, float | None]]


class BoardReviews(Protocol):
    """The reviews a part changes before the leaderboard ranks them (agreed discussions)."""

    @property
    def reviews(self) -> pl.DataFrame:
        """The reviews to rank, the part's outcomes applied."""

    @property
    def calls(self) -> pl.DataFrame:
        """The part's log rows (their cost counts for a reviews file)."""

    def reviewers(self, base: Sequence[str] | None) -> list[str] | None:
        """The reviewers of the changed reviews (`base` and the part's own)."""

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
        """The part's leaderboard block, from the rankings with and without its outcomes;
        `human`: the leaderboard's human labels (`--human`), when given, with the seed of
        the leaderboard's bootstrap."""


class BoardTable(Protocol):
    """One text table of a part's leaderboard block (terminal, Markdown, HTML)."""

    @property
    def title(self) -> str: ...
    @property
    def header(self) -> list[str]: ...
    @property
    def rows(self) -> list[list[str]]: ...
    @property
    def notes(self) -> list[str]: ...


@dataclass
class BoardText:
    """A part's leaderboard block as text: tables (terminal, Markdown, HTML) and footer lines."""

    tables: Sequence[BoardTable] = ()
    footer: list[str] = field(default_factory=list)


class StageBoard:
    """What a part adds to the leaderboard of a run directory: its block under `key`.

    The block is the leaderboard's JSON value under `key` (a stored leaderboard
    is read back as JSON, so the renderers get it as a dict); `title` heads its
    section of the HTML report (empty: no section of its own).
    """

    key: str = ""
    title: str = ""

    def prepare(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Any:
        """What the part's leaderboard options need, checked before ranking.

        `options` are the leaderboard's stage options (such as `human_scores`);
        bad input raises `arena.config.ConfigError`.
        """
        return None

    def design(self, directory: Path, reviews: pl.DataFrame) -> dict[str, Any] | None:
        """The review design the run's log records (None: every review was asked).

        Returned by at most one part; the win rates are then balanced unless
        the user chose otherwise.
        """
        return None

    def reviews(self, directories: Sequence[Path], reviews: pl.DataFrame) -> BoardReviews | None:
        """The run's reviews with the part's outcomes applied (None: it changes none).

        Bad or inconsistent input raises `arena.config.ConfigError`.
        """
        return None

    def block(self, inputs: BoardInputs) -> dict[str, Any] | None:
        """The part's block once the board is ranked (None: none)."""
        return None

    def text(self, block: Mapping[str, Any]) -> BoardText:
        """The block as text tables and lines under the board."""
        return BoardText()


# --- the parts together ---------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part of a tournament beside answers and reviews, declared in its own package."""

    name: str
    tables: tuple[StageTable, ...] = ()
    report: StageReport | None = None
    board: StageBoard | None = None
    section: StageSection | None = None
    command: StageCommand | None = None
    sim: SimResponder | None = None

    def preflight(self, t: Tournament) -> list[str]:
        """Problems with the part's section that would stop a run."""
        return []


@dataclass(frozen=True)
class Stage(Part):
    """A stage: it plans calls of its own in `arena run` (its `run.planner`)."""

    run: StageRun = field(default_factory=StageRun)

    def preflight(self, t: Tournament) -> list[str]:
        return self.run.preflight(t)


@dataclass(frozen=True)
class ReviewSelectorPart(Part):
    """The review selector: it chooses which reviews the all-pairs planner asks for."""

    run: SelectorRun = field(default_factory=SelectorRun)

    def preflight(self, t: Tournament) -> list[str]:
        return self.run.preflight(t)
