"""Where a run directory stands against a plan: done, failed, invalid, stale, pending."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arena.nightly._planfile import KEYS
from arena.stage import StageStatus
from arena.stages import register_all_tables
from arena.store import TABLES, RunLog

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


def _logged(log: RunLog, table: str) -> pl.DataFrame:
    """The id, status and logical key of every logged row of a table."""
    return log.read(table, columns=["status", *KEYS[table]]).select("id", "status", *KEYS[table])


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
    """

    def __init__(self, log: RunLog) -> None:
        self.log = log
        self._logged: dict[str, tuple[pl.DataFrame, pl.DataFrame]] = {}

    def _table(self, table: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The (id, status) of the logged rows of `table`, and their distinct keys."""
        if table not in self._logged:
            logged = _logged(self.log, table)
            seen = logged.select(KEYS[table]).unique().with_columns(_seen=pl.lit(True))
            self._logged[table] = (logged.select("id", "status"), seen)
        return self._logged[table]

    def __call__(self, plan: pl.DataFrame) -> pl.DataFrame:
        parts: list[pl.DataFrame] = []
        for table, keys in KEYS.items():
            calls = plan.filter(pl.col("stage") == table)
            if not calls.height:
                continue
            status, seen = self._table(table)
            calls = calls.join(status, on="id", how="left", maintain_order="left")
            calls = calls.join(seen, on=list(keys), how="left", maintain_order="left")
            state = (
                pl.when(pl.col("status").is_not_null())
                .then(pl.col("status").replace_strict(_STATE_OF_STATUS, default="done"))
                .when(pl.col("_seen").is_not_null())
                .then(pl.lit("stale"))
                .otherwise(pl.lit("pending"))
            )
            parts.append(calls.with_columns(state=state).drop("status", "_seen"))
        if not parts:
            return plan.clear().with_columns(state=pl.lit(None, pl.String))
        return parts[0] if len(parts) == 1 else pl.concat(parts)


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
    plan: pl.DataFrame,
    log: RunLog,
    *,
    stages: Mapping[str, StageStatus] | None = None,
) -> StatusReport:
    """Planned, done, invalid, failed, stale and pending calls per stage and provider, and spend.

    Spend counts every logged row of the provider in that stage's table, stale
    ones included (money spent is spent). `stages` (stage name -> its
    `StageStatus`) add the stages that count planned calls (`calls`: BatchEval,
    in batch calls, its table named as the stage) as rows; the tables of the
    others are `other_tables`.
    """
    stages = stages or {}
    report = StatusReport()
    states = classify(plan, log).select("stage", "provider", "state")
    counted = [name for name, st in stages.items() if st.calls is not None]
    for name in counted:
        calls = stages[name].calls
        assert calls is not None
        states = pl.concat([states, calls.select(pl.lit(name).alias("stage"), "provider", "state")])
    counts = (
        states.group_by("stage", "provider", "state")
        .len()
        .pivot(on="state", index=["stage", "provider"], values="len")
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
    for table, keys in KEYS.items():
        logged = _logged(log, table)
        planned = plan.filter(pl.col("stage") == table)
        outside = logged.join(planned.select("id"), on="id", how="anti")
        superseded = outside.join(planned.select(keys).unique(), on=list(keys), how="semi")
        report.outside_plan[table] = {
            "stale": superseded.height,
            "unused": outside.height - superseded.height,
        }
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
            report.blocks[name] = st.block
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
