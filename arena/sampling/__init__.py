"""Sampled review designs: `uniform` and `adaptive` (docs/sampling.md).

A planner-layer package: it chooses which review calls of the full plan a run
makes. `Grid` and `balanced_units` describe designs as masks over the full
grid of units (question x unordered pair x reviewer); `fit_design` and
`choose_round` are the adaptive rule.
"""

from arena.sampling._adaptive import DesignFit, allocate, choose_round, fit_design
from arena.sampling._design import Grid, balanced_units, pick_in_pair
from arena.sampling._hooks import SAMPLING_STAGE, SamplingHooks
from arena.sampling._planner import (
    SAMPLING_TABLE,
    DesignSelector,
    SamplingBudget,
    sampling_budget,
)
from arena.sampling._status import design_status

__all__ = [
    "SAMPLING_STAGE",
    "SAMPLING_TABLE",
    "SamplingHooks",
    "DesignSelector",
    "SamplingBudget",
    "sampling_budget",
    "DesignFit",
    "Grid",
    "allocate",
    "balanced_units",
    "design_status",
    "choose_round",
    "fit_design",
    "pick_in_pair",
]
