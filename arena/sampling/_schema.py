"""The `sampling` log table: one row per selected unit (question x pair x reviewer)."""

from __future__ import annotations

import pyarrow as pa

from arena.store import register_table

__all__ = ["SAMPLING_SCHEMA", "SAMPLING_TABLE"]

SAMPLING_TABLE = "sampling"
SAMPLING_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # the unit: stable_id of its two review ids
        pa.field("round", pa.int64()),
        pa.field("round_id", pa.string()),  # the record call that wrote the round
        pa.field("strategy", pa.string()),
        pa.field("question_id", pa.string()),
        pa.field("model_a", pa.string()),  # the pair, in contestants order
        pa.field("model_b", pa.string()),
        pa.field("reviewer", pa.string()),
        pa.field("review_ab_id", pa.string()),
        pa.field("review_ba_id", pa.string()),
        pa.field("selected_at", pa.float64()),
        pa.field("run_id", pa.string()),
    ]
)
register_table(SAMPLING_TABLE, SAMPLING_SCHEMA)
