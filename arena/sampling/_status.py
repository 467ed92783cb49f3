"""What a sampled design has spent and may still spend, read from a run directory's log."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from arena.config import Tournament
from arena.pipeline import Plan
from arena.sampling._planner import SAMPLING_TABLE, baseline_review_calls, sampling_budget
from arena.store import RunLog
from arena.types import CallStatus

__all__ = ["SampledDesign", "design_status"]


@dataclass(frozen=True)
class SampledDesign:
    """What a sampled design has spent and may still spend (`arena plan`, `arena status`).

    `selected_review_calls`: review calls of units selected so far that are
    still in the plan; `judged_review_calls`: those logged with a verdict;
    `remaining_review_calls`: the most the next runs may still make;
    `max_review_cost_usd` (`arena plan` only, None: unpriced reviewers): what
    those may cost at most.
    """

    strategy: str
    full_review_calls: int
    budget_review_calls: int
    baseline: str | None
    selected_review_calls: int
    judged_review_calls: int
    remaining_review_calls: int
    rounds: int
    with_cost: bool = False
    max_review_cost_usd: float | None = None

    def costed(self, usd: float | None) -> SampledDesign:
        """The design with the most its remaining reviews may cost (`arena plan`)."""
        return replace(self, with_cost=True, max_review_cost_usd=usd)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "full_review_calls": self.full_review_calls,
            "budget_review_calls": self.budget_review_calls,
        }
        if self.baseline is not None:
            out["baseline"] = self.baseline
        out["selected_review_calls"] = self.selected_review_calls
        out["judged_review_calls"] = self.judged_review_calls
        out["remaining_review_calls"] = self.remaining_review_calls
        out["rounds"] = self.rounds
        if self.with_cost:
            out["max_review_cost_usd"] = self.max_review_cost_usd
        return out


def design_status(t: Tournament, plan: Plan, log: RunLog | None) -> SampledDesign | None:
    """Strategy, budget and spend of a sampled tournament (None for a full design)."""
    cfg = t.config.sampling
    if cfg.strategy == "full":
        return None
    baseline = None if cfg.baseline is None else baseline_review_calls(plan, cfg.baseline)
    budget = sampling_budget(cfg, len(plan.reviews), baseline)
    in_plan = {r.id for r in plan.reviews}
    selected: set[str] = set()
    rounds: set[int] = set()
    if log is not None:
        frame = log.read(SAMPLING_TABLE, columns=["round", "review_ab_id", "review_ba_id"])
        for _, rnd, ab, ba in frame.iter_rows():
            if ab in in_plan and ba in in_plan:
                selected.update((ab, ba))
                rounds.add(int(rnd))
        done = log.ids("reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value})
    else:
        done = set()
    judged = len(selected & done)
    return SampledDesign(
        strategy=budget.strategy,
        full_review_calls=budget.full_calls,
        budget_review_calls=budget.budget_calls,
        baseline=cfg.baseline,
        selected_review_calls=len(selected),
        judged_review_calls=judged,
        remaining_review_calls=max(budget.budget_calls - judged, 0),
        rounds=len(rounds),
    )
