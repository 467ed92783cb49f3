"""Where a run directory stands against a plan: done, failed, invalid, stale, pending."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.rundir._planfile import KEYS
from arena.stage import StageStatus
from arena.stages import register_all_tables
from arena.store import DIGEST_ID, TABLES, RunLog, digest_key

__all__ = [
    "STATES",
    "Classifier",
    "StatusReport",
    "classify",
    "status_report",
]

# Disjoint states of a planned call; they sum to the plan.
STATES = ("done", "invalid", "failed", "stale", "pending")

# A partial answer (some turns logged) is not done: the next run resumes it.
_STATE_OF_STATUS = {"ok": "done", "invalid": "invalid", "failed": "failed", "partial": "pending"}


def classify(plan: pl.DataFrame, log: RunLog) -> pl.DataFrame:
    """The plan with a `state` column (one of STATES) per call.

    done / invalid / failed: the call's current id is logged with that status.
    stale: not logged under its current id, but its logical key is (under an
    id made for an older config): the next run makes it again.
    pending: never logged.
    """
    return Classifier(log)(plan)


class Classifier:
    """`classify` a slice of the plan at a time: the log's ids and keys are read once.

    Calling it with a slice of the plan's frame (`plan_chunks`) gives the
    slice with its `state` column, rows in order.

    The log is read coded (`RunLog.read_coded`, a few parts at a time): ids as
    the plan makes them as their digits (16 bytes a row), statuses and keys as
    Enums (a byte or two each), so a million logged calls take about 25 MB
    instead of their texts. The plan's ids and keys are turned alike to be
    joined with them (a plan id of another form cannot be logged as digits).
    """

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self._logged: dict[str, tuple[pl.DataFrame, pl.DataFrame]] = {}
        # Per table: which logged rows and which distinct keys the plan's slices named.
        self._named: dict[str, tuple[NDArray[np.bool_], NDArray[np.bool_]]] = {}

    def outside(self, table: str) -> dict[str, int]:
        """Logged rows of `table` (latest per id) whose id no slice classified so far
        has: `stale` when a slice has their logical key (made for an older config),
        else `unused` (a removed model or question). Call after the whole plan."""
        logged, seen = self._table(table)
        rows, keys = self._marks(table)
        outside = logged.filter(pl.Series(~rows))
        planned = seen.filter(pl.Series(keys))
        stale = outside.join(planned, on="_key", how="semi").height
        return {"stale": stale, "unused": outside.height - stale}

    def _marks(self, table: str) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        if table not in self._named:
            logged, seen = self._table(table)
            self._named[table] = (
                np.zeros(logged.height, dtype=np.bool_),
                np.zeros(seen.height, dtype=np.bool_),
            )
        return self._named[table]

    def logged(self, table: str) -> pl.DataFrame:
        """The id, status and logical key of every logged row of `table` (its latest
        row per id), coded as described above; read once."""
        return self._table(table)[0]

    def _joinable(self, calls: pl.DataFrame, table: str) -> pl.DataFrame:
        """`calls` (plan rows of `table`) with `_id` and `_key`: their id and logical key
        as `logged(table)` holds them (`_key`: null when never logged)."""
        logged = self.logged(table)
        ident = pl.col("id")
        if logged.schema["id"] == pl.Int128:
            ident = pl.when(ident.str.contains(DIGEST_ID)).then(digest_key(ident))
        keys = KEYS[table]
        coded = calls.with_columns(
            pl.col(k).cast(logged.schema[k], strict=False).alias(f"_{k}") for k in keys
        )
        return coded.with_columns(ident.alias("_id"), _key(logged.schema, keys, "_")).drop(
            f"_{k}" for k in keys
        )

    def _table(self, table: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The logged rows of `table` (with their `_key`), and their distinct keys."""
        if table not in self._logged:
            keys = list(KEYS[table])
            logged = self.log.read_coded(table, ["status", *keys], ["status", *keys])
            logged = logged.with_columns(_key(logged.schema, keys))
            if logged.schema["id"] != pl.Int128:  # ids as text: in text order
                logged = logged.sort("id")
            seen = logged.select(pl.col("_key").unique().sort())
            self._logged[table] = (logged, seen)
        return self._logged[table]

    def __call__(self, plan: pl.DataFrame) -> pl.DataFrame:
        parts: list[pl.DataFrame] = []
        for table in KEYS:
            calls = plan.filter(pl.col("stage") == table)
            if not calls.height:
                continue
            logged, seen = self._table(table)
            coded = self._joinable(calls, table)
            # Each call's logged row and logical key, looked up in their sorted columns
            # (no hash table of the whole log built again for every slice).
            row = _rows_of(logged["id"], coded["_id"])
            key = _rows_of(seen["_key"], coded["_key"])
            rows, keys = self._marks(table)  # what `outside` counts
            rows[row.drop_nulls().to_numpy()] = True
            keys[key.drop_nulls().to_numpy()] = True
            status = logged["status"].gather(row).cast(pl.String)
            state = (
                pl.when(status.is_not_null())
                .then(status.replace_strict(_STATE_OF_STATUS, default="done"))
                .when(key.is_not_null())
                .then(pl.lit("stale"))
                .otherwise(pl.lit("pending"))
            )
            parts.append(calls.with_columns(state=state))
        if not parts:
            return plan.clear().with_columns(state=pl.lit(None, pl.String))
        return parts[0] if len(parts) == 1 else pl.concat(parts)


def _rows_of(values: pl.Series, wanted: pl.Series) -> pl.Series:
    """The row of each of `wanted` in `values` (sorted, no repeats; UInt32), null where
    it is absent or null."""
    if isinstance(values.dtype, pl.Struct):  # keys too wide for one number: a join
        indexed = values.to_frame("_v").with_row_index("_row")
        found = wanted.to_frame("_v").join(indexed, on="_v", how="left", maintain_order="left")
        return found["_row"]
    if not values.len():
        return pl.repeat(None, wanted.len(), dtype=pl.UInt32, eager=True)
    at = values.search_sorted(wanted, side="left").clip(0, values.len() - 1)
    hit = values.gather(at) == wanted
    return pl.select(pl.when(hit).then(at)).to_series().cast(pl.UInt32)


def _key(schema: pl.Schema, keys: Sequence[str], prefix: str = "") -> pl.Expr:
    """A logical key's Enum codes (columns `prefix` + key) as one number, `_key`: an
    integer of up to 64 bits when the codes fit (a million keys are then told apart and
    looked up as numbers), else a struct of the codes; null when a code is."""
    widths = [max(1, len(_categories(schema[k]))).bit_length() for k in keys]
    if sum(widths) > 64:
        return pl.struct(pl.col(f"{prefix}{k}") for k in keys).alias("_key")
    packed = pl.lit(0, dtype=pl.UInt64)
    for k, width in zip(keys, widths, strict=True):
        packed = packed * (1 << width) + pl.col(f"{prefix}{k}").to_physical().cast(pl.UInt64)
    return packed.alias("_key")


def _categories(dtype: pl.DataType) -> list[str]:
    assert isinstance(dtype, pl.Enum), dtype  # `RunLog.read_coded` codes the keys
    return dtype.categories.to_list()


@dataclass
class StatusReport:
    """Counts per (stage, provider), spend, logged rows outside the plan, and the stages' blocks."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: dict[str, Any] = field(default_factory=dict)
    outside_plan: dict[str, dict[str, int]] = field(default_factory=dict)
    other_tables: list[dict[str, Any]] = field(default_factory=list)
    # Per stage of `arena.stages`, its JSON block: the totals of its rows when the
    # stage counts planned calls (BatchEval batches), else what the stage reports.
    blocks: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON data."""
        return {
            "rows": self.rows,
            "total": self.total,
            "outside_plan": self.outside_plan,
            "other_tables": self.other_tables,
            **self.blocks,
        }


def status_report(
    plan: pl.DataFrame | Iterable[pl.DataFrame],
    log: RunLog,
    *,
    stages: Mapping[str, StageStatus] | None = None,
) -> StatusReport:
    """Planned, done, invalid, failed, stale and pending calls per stage and provider, and spend.

    `plan` is the plan's frame, or its slices (`plan_chunks`): each is classified
    and counted in turn, so a million-call plan never stands whole. Spend counts
    every logged row of the provider in that stage's table, stale ones included
    (money spent is spent). `stages` (stage name -> its `StageStatus`) add the
    stages that count planned calls (`calls`: BatchEval, in batch calls, its
    table named as the stage) as rows; the tables of the others are `other_tables`.
    """
    stages = stages or {}
    report = StatusReport()
    classifier = Classifier(log)  # the log's ids and keys, read once for every slice
    tallies = [
        classifier(chunk).group_by("stage", "provider", "state").len()
        for chunk in ([plan] if isinstance(plan, pl.DataFrame) else plan)
    ]
    counted = [name for name, st in stages.items() if st.calls is not None]
    for name in counted:
        calls = stages[name].calls
        assert calls is not None
        named = calls.select(pl.lit(name).alias("stage"), "provider", "state")
        tallies.append(named.group_by("stage", "provider", "state").len())
    tally_schema = pl.Schema({"stage": pl.String, "provider": pl.String, "state": pl.String})
    with_len = pl.Schema([*tally_schema.items(), ("len", pl.UInt32())])
    counts = (
        pl.concat([t.cast(with_len) for t in tallies])
        .group_by("stage", "provider", "state")
        .agg(pl.col("len").sum())
        .pivot(on="state", index=["stage", "provider"], values="len")
        if tallies
        else pl.DataFrame(schema=tally_schema)
    )
    for state in STATES:
        if state not in counts.columns:
            counts = counts.with_columns(pl.lit(0, dtype=pl.UInt32).alias(state))
    counts = counts.fill_null(0).sort("stage", "provider")
    tables = [*KEYS, *counted]
    # Every billed attempt: superseded rows (a failure retried since) included.
    spend = {table: log.spent_by_provider(table) for table in tables}  # the ledger too
    numeric = ("planned", *STATES, "spent_usd")
    for row in counts.iter_rows(named=True):
        stage, provider = str(row["stage"]), str(row["provider"])
        out: dict[str, Any] = {
            "stage": stage,
            "provider": provider,
            "planned": sum(int(row[s]) for s in STATES),
        }
        out.update({s: int(row[s]) for s in STATES})
        out["spent_usd"] = spend[stage].get(provider, 0.0)
        report.rows.append(out)
    # Spend of providers with logged rows but nothing planned (removed models).
    for stage, per_provider in spend.items():
        for provider, usd in sorted(per_provider.items()):
            if not any(r["stage"] == stage and r["provider"] == provider for r in report.rows):
                report.rows.append(
                    {
                        "stage": stage,
                        "provider": provider,
                        **dict.fromkeys(numeric[:-1], 0),
                        "spent_usd": usd,
                    }
                )
    for table in KEYS:
        report.outside_plan[table] = classifier.outside(table)
    for name, st in stages.items():
        if st.outside is not None:
            report.outside_plan[name] = st.outside
    register_all_tables()
    for table in sorted(set(TABLES) - set(tables)):
        report.other_tables.extend(_other_table(log, table))
    other_spend = sum(float(r["spent_usd"]) for r in report.other_tables)
    report.total = {k: sum(r[k] for r in report.rows) for k in numeric}
    report.total["spent_usd"] += other_spend
    for name, st in stages.items():
        if st.calls is not None:
            mine = [r for r in report.rows if r["stage"] == name]
            report.blocks[name] = {k: sum(r[k] for r in mine) for k in numeric}
        else:
            report.blocks[name] = None if st.block is None else st.block.to_json()
    return report


def _other_table(log: RunLog, table: str) -> list[dict[str, Any]]:
    """Logged rows per status and provider of a stage table outside the plan (BatchEval...)."""
    schema = TABLES[table]
    if not {"status", "provider", "cost_usd"} <= set(schema.names):
        return []
    # Rows without a provider are bookkeeping (a discussion's final verdict,
    # a reused review), not calls.
    frame = log.read(table).filter(pl.col("provider").is_not_null())
    if not frame.height:
        return []
    rows: list[dict[str, Any]] = []
    spend = log.spent_by_provider(table)  # every billed attempt, superseded ones included
    by = (
        frame.group_by("provider")
        .agg(
            ok=(pl.col("status") == "ok").sum(),
            invalid=(pl.col("status") == "invalid").sum(),
            failed=(pl.col("status") == "failed").sum(),
            spent_usd=pl.col("cost_usd").fill_null(0.0).sum(),
        )
        .sort("provider")
    )
    for r in by.iter_rows(named=True):
        rows.append(
            {
                "table": table,
                "provider": r["provider"],
                "rows_ok": int(r["ok"]),
                "rows_invalid": int(r["invalid"]),
                "rows_failed": int(r["failed"]),
                "spent_usd": spend.get(r["provider"], float(r["spent_usd"])),
            }
        )
    return rows
