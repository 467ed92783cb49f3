"""The `sampling` log table: one row per selected unit (question x pair x reviewer)."""

from __future__ import annotations

import polars as pl

from arena.store import Column, TableSchema, register_table

__all__ = ["SAMPLING_SCHEMA", "SAMPLING_TABLE"]

SAMPLING_TABLE = "sampling"
SAMPLING_SCHEMA = TableSchema(
    [
        Column("id", pl.String),  # the unit: stable_id of its two review ids
        Column("round", pl.Int64),
        Column("round_id", pl.String),  # the record call that wrote the round
        Column("strategy", pl.String),
        Column("question_id", pl.String),
        Column("model_a", pl.String),  # the pair, in contestants order
        Column("model_b", pl.String),
        Column("reviewer", pl.String),
        Column("review_ab_id", pl.String),
        Column("review_ba_id", pl.String),
        Column("selected_at", pl.Float64),
        Column("run_id", pl.String),
    ]
)
register_table(SAMPLING_TABLE, SAMPLING_SCHEMA)
