"""The `batcheval` log table (one row per sample per batch call) and the scores file."""

from __future__ import annotations

import pyarrow as pa

from arena.store import register_table
from arena.store._schema import COMMON_CALL_FIELDS

__all__ = ["SCORES_FILE", "TABLE", "TABLE_SCHEMA"]

TABLE = "batcheval"
# Final scores written after each stage run (derived data; the log is the truth).
SCORES_FILE = "batcheval_scores.parquet"

# Call columns are the batch call's, except tokens_in, tokens_out and cost_usd:
# those are this sample's share, so that they sum to the call's totals.
TABLE_SCHEMA = pa.schema(
    [
        *COMMON_CALL_FIELDS,
        pa.field("round", pa.int64()),
        pa.field("batch_id", pa.string()),
        pa.field("batch_index", pa.int64()),
        pa.field("position", pa.int64()),  # k of "Sample<k>" in the prompt
        pa.field("sample_id", pa.string()),
        pa.field("criterion", pa.string()),
        pa.field("scorer", pa.string()),
        pa.field("score", pa.float64()),  # null when unscored (invalid) or failed
        pa.field("scale_low", pa.float64()),
        pa.field("scale_high", pa.float64()),
        pa.field("text", pa.string()),  # raw reply; null when the call failed
        pa.field("reask_text", pa.string()),  # raw reply to the re-ask, if there was one
        pa.field("reasked", pa.bool_()),
        pa.field("model", pa.string()),  # in a tournament: the contestant that wrote it
        pa.field("question_id", pa.string()),
        # The `examples:` items the batch's prompt showed (null without examples).
        pa.field("example_ids", pa.list_(pa.string())),
    ]
)

register_table(TABLE, TABLE_SCHEMA)
