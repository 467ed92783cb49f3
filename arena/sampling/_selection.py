"""A sampled review design, the review selector of a tournament: what `arena.stages` asks of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.sampling._schema import SAMPLING_TABLE
from arena.stage import (
    EstimateInputs,
    ReviewSelectorPart,
    SelectorRun,
    StageBoard,
    StageEstimate,
    StageReport,
    StageStatus,
    StageTable,
    StatusInputs,
)
from arena.store import RunLog, digest_keys_of

if TYPE_CHECKING:
    from arena.config import Tournament
    from arena.pipeline import Plan
    from arena.sampling._placement import PlacementSelector
    from arena.sampling._planner import DesignSelector

# The selectors and the design's status load in the method that uses them: the
# leaderboard asks this stage only for a sampled run's design (its log table),
# without the planner, the adaptive fit or the run machinery they import.

__all__ = ["SAMPLING_SELECTOR", "SamplingBoard", "SamplingPlanStatus", "SamplingRun"]


class SamplingRun(SelectorRun):
    """In `arena run`: a `uniform` or `adaptive` design (or a baseline, or a new contestant's
    placement) chooses the reviews; `full` with no placement: every review."""

    def selector(self, t: Tournament, plan: Plan) -> DesignSelector | PlacementSelector | None:
        from arena.sampling._placement import placement_selector
        from arena.sampling._planner import BaselineSelector, DesignSelector

        strategy = t.config.sampling.strategy
        if strategy == "baseline":
            return BaselineSelector(t, plan)
        if strategy == "full":
            return placement_selector(t, plan)  # a new contestant, with `placement: search`
        return DesignSelector(t, plan)


class SamplingPlanStatus(StageReport):
    """In `arena plan` and `arena status`: what the sampled design has spent and may spend."""

    plan_key = "sampling"

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        if inputs.t.config.sampling.strategy == "full":
            return StageEstimate()  # no design to report (design_status: None)
        from arena.sampling._status import design_status

        sampled = design_status(inputs.t, inputs.plan, inputs.log)
        if sampled is None:
            return StageEstimate()
        # The most the sampled run may spend on reviews: its dearest remaining calls.
        costs = inputs.pending_review_costs()
        if any(c is None for c in costs):
            sampled = sampled.costed(None)
        else:
            dearest = sorted((c for c in costs if c is not None), reverse=True)
            sampled = sampled.costed(sum(dearest[: sampled.remaining_review_calls]))
        baseline = inputs.t.config.sampling.baseline
        design = (
            f"baseline against {baseline} (every contestant meets only it, both orders, "
            f"every question and reviewer): {sampled.budget_review_calls} of"
            if baseline is not None
            else f"{sampled.strategy}, budget {sampled.budget_review_calls} of"
        )
        note = (
            f"sampling: {design} "
            f"{sampled.full_review_calls} review calls; {sampled.judged_review_calls} "
            f"judged, at most {sampled.remaining_review_calls} more, costing at most "
            + (
                "an unknown amount (unpriced reviewers)"
                if sampled.max_review_cost_usd is None
                else f"${sampled.max_review_cost_usd:.4f}"
            )
            + ". The table counts the full plan's reviews."
        )
        return StageEstimate(block=sampled, notes=[note])

    def status(self, inputs: StatusInputs) -> StageStatus:
        if inputs.t is None or inputs.plan is None or inputs.t.config.sampling.strategy == "full":
            return StageStatus()  # no design to report (design_status: None)
        from arena.sampling._status import design_status

        sampled = design_status(inputs.t, inputs.plan, inputs.log)
        if sampled is None:
            return StageStatus()
        note = (
            f"sampling: {sampled.strategy}, {sampled.judged_review_calls} of a budget of "
            f"{sampled.budget_review_calls} review calls judged ({sampled.rounds} rounds), "
            f"at most {sampled.remaining_review_calls} more; the table counts the full "
            f"plan's {sampled.full_review_calls} reviews, most of which a sampled run "
            "never makes."
        )
        return StageStatus(block=sampled, notes=[note])


class SamplingBoard(StageBoard):
    """On the leaderboard: the design a sampled run's log records."""

    key = "sampling"

    def design(self, directory: Path, reviews: pl.DataFrame) -> dict[str, Any] | None:
        """A sampled run's design, from its `sampling` table (None for a full design).

        `strategy`, the `rounds` selected, `units` and `selected_review_calls` (of
        the current log), and `ranked_review_calls`: the reviews the leaderboard
        counts that belong to selected units.
        """
        if not (directory / "log").is_dir():
            return None
        columns = ["round", "strategy", "review_ab_id", "review_ba_id", "model_a", "model_b"]
        frame = RunLog(directory).read(SAMPLING_TABLE, columns=columns)
        if frame.height == 0:
            return None
        selected = pl.concat([frame["review_ab_id"], frame["review_ba_id"]])
        if reviews.schema.get("id") == pl.Int128:  # ids as their digits (`read_coded`)
            selected = digest_keys_of(selected)
        ranked = int(reviews["id"].is_in(selected.implode()).sum()) if reviews.height else 0
        strategies = frame["strategy"].unique().to_list()
        out: dict[str, Any] = {
            "strategy": strategies[0] if len(strategies) == 1 else "mixed",
            "rounds": int(frame["round"].n_unique()),
            "units": frame.height,
            "selected_review_calls": 2 * frame.height,
            "ranked_review_calls": ranked,
        }
        if out["strategy"] == "baseline":
            # The baseline design: the one model in every selected unit.
            common = set(frame["model_a"].to_list()) | set(frame["model_b"].to_list())
            for a, b in frame.select("model_a", "model_b").iter_rows():
                common &= {a, b}
            if len(common) == 1:
                out["baseline"] = common.pop()
        return out


SAMPLING_SELECTOR = ReviewSelectorPart(
    name="sampling",
    tables=(StageTable(SAMPLING_TABLE, "arena.sampling._schema:SAMPLING_SCHEMA"),),
    run=SamplingRun(),
    report=SamplingPlanStatus(),
    board=SamplingBoard(),
)
