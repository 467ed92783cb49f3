"""The final-scores Parquet file a stage run leaves in its output directory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from arena.batcheval._planner import SampleScore

__all__ = ["SCORES_SCHEMA", "read_scores", "scores_frame", "write_scores"]

SCORES_SCHEMA = pl.Schema(
    [
        ("sample_id", pl.String()),
        ("criterion", pl.String()),
        ("scorer", pl.String()),
        ("score", pl.Float64()),
        ("spread", pl.Float64()),
        ("rounds_scored", pl.Int64()),
        ("rounds_missing", pl.Int64()),
        ("round_scores", pl.List(pl.Float64())),
        ("model", pl.String()),
        ("question_id", pl.String()),
    ]
)


def scores_frame(scores: Sequence[SampleScore]) -> pl.DataFrame:
    """Final scores as a data frame (one row per sample, criterion and scorer)."""
    return pl.DataFrame(
        {
            "sample_id": [s.sample_id for s in scores],
            "criterion": [s.criterion for s in scores],
            "scorer": [s.scorer for s in scores],
            "score": [s.score for s in scores],
            "spread": [s.spread for s in scores],
            "rounds_scored": [s.rounds_scored for s in scores],
            "rounds_missing": [s.rounds_missing for s in scores],
            "round_scores": [list(s.round_scores) for s in scores],
            "model": [s.model for s in scores],
            "question_id": [s.question_id for s in scores],
        },
        schema=SCORES_SCHEMA,
    )


def write_scores(path: Path, scores: Sequence[SampleScore]) -> None:
    """Write the scores file atomically (temporary name, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    scores_frame(scores).write_parquet(tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    tmp.replace(path)


def read_scores(path: Path) -> pl.DataFrame | None:
    """The scores file as a data frame, or None when there is none."""
    if not path.is_file():
        return None
    return pl.read_parquet(path)
