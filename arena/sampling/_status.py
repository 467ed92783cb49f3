"""What a sampled design has spent and may still spend, read from a run directory's log."""

from __future__ import annotations

from typing import Any

from arena.config import Tournament
from arena.pipeline import Plan
from arena.sampling._planner import SAMPLING_TABLE, baseline_review_calls, sampling_budget
from arena.store import RunLog
from arena.types import CallStatus

__all__ = ["design_status"]


def design_status(t: Tournament, plan: Plan, log: RunLog | None) -> dict[str, Any] | None:
    """Strategy, budget and spend of a sampled tournament (None for a full design).

    `selected_review_calls`: review calls of units selected so far that are
    still in the plan; `judged_review_calls`: those logged with a verdict;
    `remaining_review_calls`: the most the next runs may still make.
    """
    cfg = t.config.sampling
    if cfg.strategy == "full":
        return None
    baseline = None if cfg.baseline is None else baseline_review_calls(plan, cfg.baseline)
    budget = sampling_budget(cfg, len(plan.reviews), baseline)
    out: dict[str, Any] = budget.to_json()
    if cfg.baseline is not None:
        out["baseline"] = cfg.baseline
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
    out["selected_review_calls"] = len(selected)
    out["judged_review_calls"] = judged
    out["remaining_review_calls"] = max(budget.budget_calls - judged, 0)
    out["rounds"] = len(rounds)
    return out
