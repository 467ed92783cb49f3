"""Sampled review designs: `uniform` and `adaptive` (docs/sampling.md).

A planner-layer package: it chooses which review calls of the full plan a run
makes. `Grid` and `balanced_units` describe designs as masks over the full
grid of units (question x unordered pair x reviewer); `select_round`
is the rule a run follows round after round (`fit_design` and `choose_round`
its adaptive step).

Importing this package registers the `sampling` log table; its other names load
on first use, from their modules (PEP 562): the stage itself is
`arena.sampling._selection`, which `arena.stages` imports without the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes
from arena.sampling._schema import SAMPLING_SCHEMA, SAMPLING_TABLE

if TYPE_CHECKING:
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
    from arena.sampling._placement import PlacementSelector, current_order, placement_selector
    from arena.sampling._planner import (
        BaselineSelector,
        DesignSelector,
        SamplingBudget,
        baseline_review_calls,
        sampling_budget,
    )
    from arena.sampling._selection import SAMPLING_SELECTOR
    from arena.sampling._status import SampledDesign, design_status

# Each public name -> its module, imported on first use.
_LAZY: dict[str, str] = {
    "DesignFit": "arena.sampling._adaptive",
    "RoundChoice": "arena.sampling._adaptive",
    "allocate": "arena.sampling._adaptive",
    "choose_round": "arena.sampling._adaptive",
    "fit_design": "arena.sampling._adaptive",
    "reviewer_reliability": "arena.sampling._adaptive",
    "reviewer_shares": "arena.sampling._adaptive",
    "select_round": "arena.sampling._adaptive",
    "target_scores": "arena.sampling._adaptive",
    "Grid": "arena.sampling._design",
    "balanced_units": "arena.sampling._design",
    "pick_in_pair": "arena.sampling._design",
    "SAMPLING_SELECTOR": "arena.sampling._selection",
    "SampledDesign": "arena.sampling._status",
    "PlacementSelector": "arena.sampling._placement",
    "current_order": "arena.sampling._placement",
    "placement_selector": "arena.sampling._placement",
    "BaselineSelector": "arena.sampling._planner",
    "DesignSelector": "arena.sampling._planner",
    "SamplingBudget": "arena.sampling._planner",
    "baseline_review_calls": "arena.sampling._planner",
    "sampling_budget": "arena.sampling._planner",
    "design_status": "arena.sampling._status",
}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "PlacementSelector",
    "current_order",
    "placement_selector",
    "SAMPLING_SELECTOR",
    "SAMPLING_SCHEMA",
    "SAMPLING_TABLE",
    "SampledDesign",
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
