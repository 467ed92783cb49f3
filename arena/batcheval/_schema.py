"""The `batcheval` log table (one row per sample per batch call) and the scores file."""

from __future__ import annotations

import polars as pl

from arena.store import Column, TableSchema, register_table
from arena.store._schema import COMMON_CALL_FIELDS

__all__ = ["SCORES_FILE", "TABLE", "TABLE_SCHEMA"]

TABLE = "batcheval"
# Final scores written after each stage run (derived data; the log is the truth).
SCORES_FILE = "batcheval_scores.parquet"

# Call columns are the batch call's, except tokens_in, tokens_out and cost_usd:
# those are this sample's share, so that they sum to the call's totals.
TABLE_SCHEMA = TableSchema(
    [
        *COMMON_CALL_FIELDS,
        Column("round", pl.Int64),
        Column("batch_id", pl.String),
        Column("batch_index", pl.Int64),
        Column("position", pl.Int64),  # k of "Sample<k>" in the prompt
        Column("sample_id", pl.String),
        Column("criterion", pl.String),
        Column("scorer", pl.String),
        Column("score", pl.Float64),  # null when unscored (invalid) or failed
        Column("scale_low", pl.Float64),
        Column("scale_high", pl.Float64),
        Column("text", pl.String),  # raw reply; null when the call failed
        Column("reask_text", pl.String),  # raw reply to the re-ask, if there was one
        Column("reasked", pl.Boolean),
        Column("model", pl.String),  # in a tournament: the contestant that wrote it
        Column("question_id", pl.String),
        # The `examples:` items the batch's prompt showed (null without examples).
        Column("example_ids", pl.List(pl.String)),
    ]
)

register_table(TABLE, TABLE_SCHEMA)
