"""Table schemas of the run log and validation of the rows written to them.

Every table has a string `id` column (unique per logical row) plus its own
columns. Later stages (discussions, batcheval, history) add their tables with
`register_table`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import polars as pl
import pyarrow as pa

from arena.types import Usage

__all__ = [
    "COMMON_CALL_FIELDS",
    "TABLES",
    "USAGE_DETAIL_COLUMNS",
    "normalize_row",
    "register_table",
    "table_schema",
    "usage_columns",
]

# Columns shared by every table of calls (see docs/DESIGN.md).
COMMON_CALL_FIELDS: tuple[pa.Field, ...] = (
    pa.field("id", pa.string()),
    pa.field("status", pa.string()),  # "ok" | "failed" | "invalid" | "partial"
    pa.field("error", pa.string()),
    pa.field("provider", pa.string()),
    pa.field("tokens_in", pa.int64()),
    pa.field("tokens_out", pa.int64()),
    pa.field("cost_usd", pa.float64()),
    pa.field("latency_s", pa.float64()),
    pa.field("attempts", pa.int64()),
    pa.field("started_at", pa.float64()),  # epoch seconds
    pa.field("finished_at", pa.float64()),  # epoch seconds
    pa.field("run_id", pa.string()),
    # tokens counted from the texts: the provider reported no usage
    pa.field("usage_estimated", pa.bool_()),
    # Of tokens_in: read from / written to the provider's prompt cache; of
    # tokens_out: reasoning (thinking). Null: not reported (or a log older
    # than these columns).
    pa.field("tokens_cache_read", pa.int64()),
    pa.field("tokens_cache_write", pa.int64()),
    pa.field("tokens_reasoning", pa.int64()),
)

# The token columns that price a call apart from plain input and output.
USAGE_DETAIL_COLUMNS = ("tokens_cache_read", "tokens_cache_write", "tokens_reasoning")


def usage_columns(usages: Iterable[Usage]) -> dict[str, Any]:
    """The token columns of a row over `usages`: in, out, estimated, cache and reasoning.

    A cache or reasoning count is null when no usage reported it.
    """
    total = Usage(0, 0)
    for usage in usages:
        total = total + usage
    return {
        "tokens_in": total.input_tokens,
        "tokens_out": total.output_tokens,
        "usage_estimated": total.estimated,
        "tokens_cache_read": total.cache_read_tokens,
        "tokens_cache_write": total.cache_write_tokens,
        "tokens_reasoning": total.reasoning_tokens,
    }


TABLES: dict[str, pa.Schema] = {
    "answers": pa.schema(
        [
            *COMMON_CALL_FIELDS,
            pa.field("question_id", pa.string()),
            pa.field("model", pa.string()),
            pa.field("answer_turns", pa.list_(pa.string())),  # null when failed
        ]
    ),
    "reviews": pa.schema(
        [
            *COMMON_CALL_FIELDS,
            pa.field("question_id", pa.string()),
            pa.field("model_a", pa.string()),
            pa.field("model_b", pa.string()),
            pa.field("reviewer", pa.string()),
            pa.field("answer_a_id", pa.string()),
            pa.field("answer_b_id", pa.string()),
            pa.field("text", pa.string()),  # raw review text; null when failed
            pa.field("verdict", pa.string()),  # "A" | "B" | "tie" | "invalid" | null
            # A graded verdict (a template's declared tokens, `review.verdicts`):
            # the share of the win credited to A, and the battle's weight. Null:
            # the verdict's own share (1, 0.5, 0) and weight 1 (and in older logs).
            pa.field("p_a", pa.float64()),
            pa.field("weight", pa.float64()),
            # The `examples:` items shown in the prompt (null without examples).
            pa.field("example_ids", pa.list_(pa.string())),
        ]
    ),
}

# Table names become file and folder names, and must not be confused with the
# `<table>.journal.<seq>.sealed.jsonl` naming.
_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def register_table(name: str, schema: pa.Schema) -> None:
    """Add a table to TABLES; re-registering the same schema is a no-op."""
    if not _TABLE_NAME.match(name):
        raise ValueError(f"invalid table name {name!r}: use lower-case letters, digits and '_'")
    if schema.get_field_index("id") != 0 or not pa.types.is_string(schema.field("id").type):
        raise ValueError(f"table {name!r}: the first column must be 'id' of type string")
    if len(set(schema.names)) != len(schema.names):
        raise ValueError(f"table {name!r}: duplicate column names in {schema.names}")
    existing = TABLES.get(name)
    if existing is not None and not existing.equals(schema):
        raise ValueError(f"table {name!r} is already registered with a different schema")
    TABLES[name] = schema


def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of a registered table, or ValueError naming it."""
    try:
        return TABLES[table]
    except KeyError:
        known = ", ".join(sorted(TABLES))
        raise ValueError(f"unknown table {table!r} (registered: {known})") from None


def polars_schema(table: str) -> pl.Schema:
    """The polars schema of a registered table."""
    return _compiled(table).polars


def empty_frame(table: str) -> pl.DataFrame:
    """An empty frame with the table's columns and types."""
    return pl.DataFrame(schema=polars_schema(table))


_Convert = Callable[[Any], Any]


class _RowError(Exception):
    """A value that does not fit its column (turned into ValueError with context)."""


def _convert_string(value: Any) -> Any:
    if isinstance(value, str):
        return str(value)  # plain str, also for StrEnum members
    raise _RowError("expected a string")


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _convert_int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _RowError("integer out of the 64-bit range")
        return int(value)
    raise _RowError("expected an integer")


def _convert_float(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _RowError("expected a number")


def _convert_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    raise _RowError("expected a bool")


def _convert_string_list(value: Any) -> Any:
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return [str(item) for item in value]
    raise _RowError("expected a list of strings")


def _converter(dtype: pa.DataType) -> _Convert:
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _convert_string
    if pa.types.is_integer(dtype):
        return _convert_int
    if pa.types.is_floating(dtype):
        return _convert_float
    if pa.types.is_boolean(dtype):
        return _convert_bool
    if (pa.types.is_list(dtype) or pa.types.is_large_list(dtype)) and (
        pa.types.is_string(dtype.value_type) or pa.types.is_large_string(dtype.value_type)
    ):
        return _convert_string_list

    def convert_other(value: Any) -> Any:
        try:
            pa.scalar(value, type=dtype)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise _RowError(f"expected {dtype}: {exc}") from None
        return value

    return convert_other


class _Compiled:
    """Per-table converters, rebuilt when the registered schema object changes."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.names: list[str] = list(schema.names)
        self.converters: dict[str, _Convert] = {f.name: _converter(f.type) for f in schema}
        # Values of exactly these Python types need no conversion.
        self.exact: dict[str, type] = {}
        for f in schema:
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
                self.exact[f.name] = str
            elif pa.types.is_floating(f.type):
                self.exact[f.name] = float
            elif pa.types.is_boolean(f.type):
                self.exact[f.name] = bool
        self.polars: pl.Schema = pl.from_arrow(pa.Table.from_batches([], schema=schema)).schema  # type: ignore[union-attr]


_COMPILED: dict[str, _Compiled] = {}


def _compiled(table: str) -> _Compiled:
    schema = table_schema(table)
    compiled = _COMPILED.get(table)
    if compiled is None or compiled.schema is not schema:
        compiled = _COMPILED[table] = _Compiled(schema)
    return compiled


def normalize_row(table: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """Check a row against its table: every column present (null if missing), types right."""
    compiled = _compiled(table)
    converters, exact = compiled.converters, compiled.exact
    out: dict[str, Any] = dict.fromkeys(compiled.names)
    for column, value in row.items():
        convert = converters.get(column)
        if convert is None:
            raise ValueError(f"table {table!r} has no column {column!r}")
        if value is None or type(value) is exact.get(column):
            out[column] = value
            continue
        try:
            out[column] = convert(value)
        except _RowError as exc:
            raise ValueError(
                f"table {table!r} column {column!r}: {exc} (got {type(value).__name__})"
            ) from None
    if not out["id"]:
        raise ValueError(f"table {table!r}: every row needs a non-empty 'id'")
    return out
