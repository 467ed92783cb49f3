"""Sampled review designs: `uniform` and `adaptive` (docs/sampling.md).

A planner-layer package: it chooses which review calls of the full plan a run
makes. `Grid` and `balanced_units` describe designs as masks over the full
grid of units (question x unordered pair x reviewer); `select_round`
is the rule a run follows round after round (`fit_design` and `choose_round`
its adaptive step).
"""

from arena.sampling._adaptive import (
    DesignFit,
    RoundChoice,
    allocate,
    choose_round,
    fit_design,
    reviewer_reliability,
    reviewer_shares,
    select_round,
    target_scores,
)
from arena.sampling._design import Grid, balanced_units, pick_in_pair
from arena.sampling._hooks import SAMPLING_STAGE, SamplingHooks
from arena.sampling._placement import PlacementSelector, current_order, placement_selector
from arena.sampling._planner import (
    SAMPLING_TABLE,
    BaselineSelector,
    DesignSelector,
    SamplingBudget,
    baseline_review_calls,
    sampling_budget,
)
from arena.sampling._status import design_status

__all__ = [
    "PlacementSelector",
    "current_order",
    "placement_selector",
    "SAMPLING_STAGE",
    "SAMPLING_TABLE",
    "SamplingHooks",
    "BaselineSelector",
    "DesignSelector",
    "SamplingBudget",
    "baseline_review_calls",
    "sampling_budget",
    "DesignFit",
    "RoundChoice",
    "Grid",
    "allocate",
    "balanced_units",
    "design_status",
    "choose_round",
    "fit_design",
    "pick_in_pair",
    "reviewer_reliability",
    "reviewer_shares",
    "select_round",
    "target_scores",
]
