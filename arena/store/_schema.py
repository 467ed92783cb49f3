"""Table schemas of the run log and validation of the rows written to them.

Every table has a string `id` column (unique per logical row) plus its own
columns. Later stages (discussions, batcheval, history) add their tables with
`register_table`.

A schema is a `TableSchema`: its `Column`s, each a name, a polars type and
whether it may be null. Reading the log needs only those (polars reads the
Parquet parts), so a command that only reads (`arena status`, `arena plan`,
`arena leaderboard`) never pays for loading pyarrow at its start; the Arrow
schema a writer casts each part to (`TableSchema.arrow`) is made on first
use. `register_table` also takes a pyarrow schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.types import Usage

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "COMMON_CALL_FIELDS",
    "TABLES",
    "USAGE_DETAIL_COLUMNS",
    "Column",
    "TableSchema",
    "normalize_row",
    "register_table",
    "table_schema",
    "usage_columns",
]


@dataclass(frozen=True)
class Column:
    """A log table's column: its name, its polars type and whether it may be null.

    The types the log's own tables use are `pl.String`, `pl.Int64`,
    `pl.Float64`, `pl.Boolean` and `pl.List(pl.String)`; a table registered
    with a pyarrow schema may have others.
    """

    name: str
    dtype: pl.DataType | type[pl.DataType]
    nullable: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.dtype, type):  # `pl.String` stands for `pl.String()`
            object.__setattr__(self, "dtype", self.dtype())


class TableSchema:
    """A log table's columns (`Column`), in order; their names, polars and Arrow schemas."""

    def __init__(self, columns: Iterable[Column], arrow: pa.Schema | None = None) -> None:
        self.columns: tuple[Column, ...] = tuple(columns)
        self.names: list[str] = [c.name for c in self.columns]
        self.polars = pl.Schema({c.name: c.dtype for c in self.columns})
        self._arrow = arrow

    @classmethod
    def of_arrow(cls, schema: pa.Schema) -> TableSchema:
        """The table schema of a pyarrow schema (kept as its Arrow schema)."""
        import pyarrow as pa

        polars = pl.from_arrow(pa.Table.from_batches([], schema=schema)).schema  # type: ignore[union-attr]
        return cls((Column(f.name, polars[f.name], f.nullable) for f in schema), schema)

    def arrow(self) -> pa.Schema:
        """The Arrow schema each part is written with (pyarrow loads on first use)."""
        if self._arrow is None:
            import pyarrow as pa

            self._arrow = pa.schema(
                [pa.field(c.name, _arrow_type(c.dtype), c.nullable) for c in self.columns]
            )
        return self._arrow

    def equals(self, other: TableSchema) -> bool:
        """Whether both have the same columns: names, types and nullability, in order."""
        return self.columns == other.columns

    def __iter__(self) -> Iterator[Column]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __repr__(self) -> str:
        return f"TableSchema({', '.join(f'{c.name}: {c.dtype}' for c in self.columns)})"


def _arrow_type(dtype: pl.DataType | type[pl.DataType]) -> pa.DataType:
    import pyarrow as pa

    if dtype == pl.String:
        return pa.string()
    if dtype == pl.Int64:
        return pa.int64()
    if dtype == pl.Float64:
        return pa.float64()
    if dtype == pl.Boolean:
        return pa.bool_()
    if dtype == pl.List(pl.String):
        return pa.list_(pa.string())
    raise ValueError(f"no Arrow type for the log column type {dtype} (give a pyarrow schema)")


# Columns shared by every table of calls (see docs/DESIGN.md).
COMMON_CALL_FIELDS: tuple[Column, ...] = (
    Column("id", pl.String),
    Column("status", pl.String),  # "ok" | "failed" | "invalid" | "partial"
    Column("error", pl.String),
    Column("provider", pl.String),
    Column("tokens_in", pl.Int64),
    Column("tokens_out", pl.Int64),
    Column("cost_usd", pl.Float64),
    Column("latency_s", pl.Float64),
    Column("attempts", pl.Int64),
    Column("started_at", pl.Float64),  # epoch seconds
    Column("finished_at", pl.Float64),  # epoch seconds
    Column("run_id", pl.String),
    # tokens counted from the texts: the provider reported no usage
    Column("usage_estimated", pl.Boolean),
    # Of tokens_in: read from / written to the provider's prompt cache; of
    # tokens_out: reasoning (thinking). Null: not reported (or a log older
    # than these columns).
    Column("tokens_cache_read", pl.Int64),
    Column("tokens_cache_write", pl.Int64),
    Column("tokens_reasoning", pl.Int64),
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


TABLES: dict[str, TableSchema] = {
    "answers": TableSchema(
        [
            *COMMON_CALL_FIELDS,
            Column("question_id", pl.String),
            Column("model", pl.String),
            Column("answer_turns", pl.List(pl.String)),  # null when failed
        ]
    ),
    "reviews": TableSchema(
        [
            *COMMON_CALL_FIELDS,
            Column("question_id", pl.String),
            Column("model_a", pl.String),
            Column("model_b", pl.String),
            Column("reviewer", pl.String),
            Column("answer_a_id", pl.String),
            Column("answer_b_id", pl.String),
            Column("text", pl.String),  # raw review text; null when failed
            Column("verdict", pl.String),  # "A" | "B" | "tie" | "invalid" | null
            # A graded verdict (a template's declared tokens, `review.verdicts`):
            # the share of the win credited to A, and the battle's weight. Null:
            # the verdict's own share (1, 0.5, 0) and weight 1 (and in older logs).
            Column("p_a", pl.Float64),
            Column("weight", pl.Float64),
            # The `examples:` items shown in the prompt (null without examples).
            Column("example_ids", pl.List(pl.String)),
        ]
    ),
}

# Table names become file and folder names, and must not be confused with the
# `<table>.journal.<seq>.sealed.jsonl` naming.
_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def register_table(name: str, schema: TableSchema | pa.Schema) -> None:
    """Add a table to TABLES (a pyarrow schema is taken as its `TableSchema`);
    re-registering the same columns is a no-op."""
    if not _TABLE_NAME.match(name):
        raise ValueError(f"invalid table name {name!r}: use lower-case letters, digits and '_'")
    if not isinstance(schema, TableSchema):  # a pyarrow schema: its caller loaded pyarrow
        schema = TableSchema.of_arrow(schema)
    if not schema.names or schema.names[0] != "id" or schema.columns[0].dtype != pl.String:
        raise ValueError(f"table {name!r}: the first column must be 'id' of type string")
    if len(set(schema.names)) != len(schema.names):
        raise ValueError(f"table {name!r}: duplicate column names in {schema.names}")
    existing = TABLES.get(name)
    if existing is not None and not existing.equals(schema):
        raise ValueError(f"table {name!r} is already registered with a different schema")
    if existing is None:
        TABLES[name] = schema


def table_schema(table: str) -> TableSchema:
    """The schema of a registered table, or ValueError naming it."""
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


def _converter(schema: TableSchema, column: Column) -> _Convert:
    dtype = column.dtype
    if dtype == pl.String:
        return _convert_string
    if dtype.is_integer():
        return _convert_int
    if dtype.is_float():
        return _convert_float
    if dtype == pl.Boolean:
        return _convert_bool
    if dtype == pl.List(pl.String):
        return _convert_string_list

    def convert_other(value: Any) -> Any:  # a type only a pyarrow schema gives: pyarrow checks
        import pyarrow as pa

        arrow_type = schema.arrow().field(column.name).type
        try:
            pa.scalar(value, type=arrow_type)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise _RowError(f"expected {arrow_type}: {exc}") from None
        return value

    return convert_other


# Values of exactly these Python types need no conversion.
_EXACT: tuple[tuple[type[pl.DataType], type], ...] = (
    (pl.String, str),
    (pl.Float64, float),
    (pl.Float32, float),
    (pl.Boolean, bool),
)


class _Compiled:
    """Per-table converters, rebuilt when the registered schema object changes."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self.names: list[str] = list(schema.names)
        self.converters: dict[str, _Convert] = {c.name: _converter(schema, c) for c in schema}
        self.exact: dict[str, type] = {
            c.name: python for c in schema for dtype, python in _EXACT if c.dtype == dtype
        }
        self.polars: pl.Schema = schema.polars


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
