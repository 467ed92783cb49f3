"""The stage's log table and YAML section."""

from __future__ import annotations

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from arena.store import Column, TableSchema
from arena.store._schema import COMMON_CALL_FIELDS

TABLE = "grades"
# One row per graded answer.
TABLE_SCHEMA = TableSchema(
    [
        *COMMON_CALL_FIELDS,
        Column("answer_id", pl.String),
        Column("model", pl.String),  # the contestant whose answer is graded
        Column("grader", pl.String),
        Column("grade", pl.Int64),  # 1..5; null when the reply has none
    ]
)


class GradesConfig(BaseModel):
    """The `grades:` section: which model grades the answers."""

    model_config = ConfigDict(extra="forbid")

    grader: str
    max_tokens: int = Field(default=16, ge=1)
