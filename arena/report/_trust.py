"""Warnings about what the input hides from the ranking: self-judged battles kept (here),
and the biases `arena.rank._bias` measures (see docs/anchors.md)."""

from __future__ import annotations

from arena.rank import ReviewSet
from arena.rank._bias import bias_warnings
from arena.rank._self_judged import sole_self_judged

__all__ = ["bias_warnings", "self_judged_warnings"]


def self_judged_warnings(rs: ReviewSet, weights: str) -> list[str]:
    """One line per reviewer whose own battles were kept as a model's only evidence
    (reliability weights; the other weightings never leave own battles out)."""
    if weights != "reliability":
        return []
    return [item.note() for item in sole_self_judged(rs)]
