"""Where a run directory stands against a plan: done, failed, invalid, stale, pending."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arena.batcheval import TABLE as BATCHEVAL_TABLE
from arena.batcheval import (
    Batch,
    BatchEvalConfig,
    CriterionConfig,
    Sample,
    Scorer,
    batch_id,
    compose_round,
    load_template,
    running_means,
    tournament_samples,
)
from arena.config import Question, Tournament
from arena.nightly._planfile import KEYS
from arena.store import TABLES, RunLog

__all__ = [
    "BATCHEVAL_SCHEMA",
    "STATES",
    "StatusReport",
    "batcheval_states",
    "classify",
    "discussion_counts",
    "status_report",
]

# Disjoint states of a planned call; they sum to the plan.
STATES = ("done", "invalid", "failed", "stale", "pending")

# A partial answer (some turns logged) is not done: the next run resumes it.
_STATE_OF_STATUS = {"ok": "done", "invalid": "invalid", "failed": "failed", "partial": "pending"}
_DONE = ("ok", "invalid")
_DISCUSSIONS = "discussions"  # arena.discuss.TABLE (importing it would load the pipeline)

AnswerRef = tuple[str, Question, str]  # (answer id, question, contestant), as planned

# One row per planned BatchEval batch call; `id` is null where the batch is not
# known yet (its round is built from the scores of rounds not all logged).
BATCHEVAL_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "provider": pl.String,
        "scorer": pl.String,
        "criterion": pl.String,
        "round": pl.Int64,
        "batch_index": pl.Int64,
        "state": pl.String,
    }
)


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
    parts: list[pl.DataFrame] = []
    for table, keys in KEYS.items():
        calls = plan.filter(pl.col("stage") == table)
        logged = _logged(log, table)
        calls = calls.join(
            logged.select("id", "status"), on="id", how="left", maintain_order="left"
        )
        seen = logged.select(keys).unique().with_columns(_seen=pl.lit(True))
        calls = calls.join(seen, on=list(keys), how="left", maintain_order="left")
        state = (
            pl.when(pl.col("status").is_not_null())
            .then(pl.col("status").replace_strict(_STATE_OF_STATUS, default="done"))
            .when(pl.col("_seen").is_not_null())
            .then(pl.lit("stale"))
            .otherwise(pl.lit("pending"))
        )
        parts.append(calls.with_columns(state=state).drop("status", "_seen"))
    return pl.concat(parts)


@dataclass
class StatusReport:
    """Counts per (stage, provider), spend, and logged rows outside the plan."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: dict[str, Any] = field(default_factory=dict)
    outside_plan: dict[str, dict[str, int]] = field(default_factory=dict)
    other_tables: list[dict[str, Any]] = field(default_factory=list)
    batcheval: dict[str, Any] | None = None  # the batcheval rows summed; None: not planned
    discussions: dict[str, int] = field(default_factory=dict)  # see discussion_counts

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON data."""
        return {
            "rows": self.rows,
            "total": self.total,
            "outside_plan": self.outside_plan,
            "other_tables": self.other_tables,
            "batcheval": self.batcheval,
            "discussions": self.discussions,
        }


def status_report(
    plan: pl.DataFrame,
    log: RunLog,
    *,
    batcheval: pl.DataFrame | None = None,
    discussion_context: str | None = None,
) -> StatusReport:
    """Planned, done, invalid, failed, stale and pending calls per stage and provider, and spend.

    Spend counts every logged row of the provider in that stage's table, stale
    ones included (money spent is spent). `batcheval` (from batcheval_states)
    adds the stage `batcheval`, counted in batch calls; without it the
    BatchEval table is one of `other_tables`. Discussions, which no plan can
    count ahead, are counted apart (discussion_counts with `discussion_context`).
    """
    report = StatusReport()
    states = classify(plan, log).select("stage", "provider", "state")
    if batcheval is not None:
        named = pl.lit(BATCHEVAL_TABLE).alias("stage")
        states = pl.concat([states, batcheval.select(named, "provider", "state")])
    counts = (
        states.group_by("stage", "provider", "state")
        .len()
        .pivot(on="state", index=["stage", "provider"], values="len")
    )
    for state in STATES:
        if state not in counts.columns:
            counts = counts.with_columns(pl.lit(0, dtype=pl.UInt32).alias(state))
    counts = counts.fill_null(0).sort("stage", "provider")
    stages = [*KEYS, BATCHEVAL_TABLE] if batcheval is not None else list(KEYS)
    # Every billed attempt: superseded rows (a failure retried since) included.
    spend = {table: log.spent_by_provider(table) for table in stages}  # the ledger too
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
    if batcheval is not None:
        report.outside_plan[BATCHEVAL_TABLE] = _batches_outside(batcheval, log)
    for table in sorted(set(TABLES) - set(stages)):
        report.other_tables.extend(_other_table(log, table))
    other_spend = sum(float(r["spent_usd"]) for r in report.other_tables)
    report.total = {k: sum(r[k] for r in report.rows) for k in numeric}
    report.total["spent_usd"] += other_spend
    if batcheval is not None:
        mine = [r for r in report.rows if r["stage"] == BATCHEVAL_TABLE]
        report.batcheval = {k: sum(r[k] for r in mine) for k in numeric}
    report.discussions = discussion_counts(log, discussion_context)
    return report


def _batches_outside(batcheval: pl.DataFrame, log: RunLog) -> dict[str, int]:
    """Logged batch calls that are not batches of the plan: in a planned batch's place, or not."""
    logged = log.read(BATCHEVAL_TABLE)
    keys = ["criterion", "scorer", "round", "batch_index"]
    batches = logged.select("batch_id", *keys).unique("batch_id")
    outside = batches.join(
        batcheval.select(pl.col("id").alias("batch_id")).drop_nulls(), on="batch_id", how="anti"
    )
    superseded = outside.join(batcheval.select(keys).unique(), on=keys, how="semi")
    return {"stale": superseded.height, "unused": outside.height - superseded.height}


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


def batcheval_states(
    t: Tournament, answers: Sequence[AnswerRef], log: RunLog | None
) -> pl.DataFrame:
    """Every BatchEval batch call of the tournament's plan, with its state (one of STATES).

    There are rounds x ceil(answers / batch_size) x criteria x scorers of
    them, counting the planned answers not logged as failed (those the stage
    scores). Batch ids are found as the stage finds them, replaying the rounds
    from the logged scores (a failed batch leaves its samples unscored for its
    round) up to the first round with a batch not logged: later rounds are
    not built yet. done / invalid / failed: the batch is logged with that
    status under its current id; stale: other rows are logged in its place
    (same criterion, scorer, round and batch index); pending: nothing is.
    `log` None: nothing is logged yet.
    """
    cfg = t.config.batcheval
    if cfg is None:
        return pl.DataFrame(schema=BATCHEVAL_SCHEMA)
    logged = log.read(BATCHEVAL_TABLE) if log is not None else pl.DataFrame()
    answer_rows = log.read("answers") if log is not None else pl.DataFrame()
    failed: set[str] = set()
    turns: dict[str, list[str]] = {}
    for aid, status, answer in (
        answer_rows.select("id", "status", "answer_turns").iter_rows() if answer_rows.height else ()
    ):
        if status == "failed":
            failed.add(aid)
        elif status == "ok":
            turns[aid] = list(answer)
    expected = [a for a in answers if a[0] not in failed]
    n_batches = math.ceil(len(expected) / cfg.batch_size)
    samples = tournament_samples(expected, turns)
    # The stage starts once every answer it scores is logged.
    ready = bool(samples) and len(samples) == len(expected)
    template = load_template(cfg, t.path) if ready else ""
    rows: dict[str, tuple[str, float | None]] = {}
    slots: dict[tuple[str, str, int, int], set[str]] = {}
    if logged.height:
        for rid, status, score in logged.select("id", "status", "score").iter_rows():
            rows[rid] = (status, score)
        keys = logged.select("criterion", "scorer", "round", "batch_index", "batch_id").unique()
        for criterion, scorer, round_index, index, bid in keys.iter_rows():
            slots.setdefault((criterion, scorer, round_index, index), set()).add(bid)
    out: list[dict[str, Any]] = []
    for criterion in cfg.criteria:
        for name in cfg.scorers:
            scorer = Scorer(
                name, t.provider_of(name), t.provider_model_id(name), t.model_fingerprint(name)
            )
            found = (
                _replay(cfg, template, criterion, scorer, samples, rows, seed=t.config.seed)
                if ready
                else {}
            )
            for round_index in range(1, cfg.rounds + 1):
                for index in range(n_batches):
                    bid, state = found.get((round_index, index), (None, None))
                    if state is None:
                        others = slots.get((criterion.name, name, round_index, index), set())
                        state = "stale" if others - {bid} else "pending"
                    out.append(
                        {
                            "id": bid,
                            "provider": scorer.provider,
                            "scorer": name,
                            "criterion": criterion.name,
                            "round": round_index,
                            "batch_index": index,
                            "state": state,
                        }
                    )
    return pl.DataFrame(out, schema=BATCHEVAL_SCHEMA)


def _replay(
    cfg: BatchEvalConfig,
    template: str,
    criterion: CriterionConfig,
    scorer: Scorer,
    samples: Sequence[Sample],
    rows: Mapping[str, tuple[str, float | None]],
    *,
    seed: object,
) -> dict[tuple[int, int], tuple[str, str | None]]:
    """(round, batch index) -> (batch id, logged state or None) of the rounds built so far.

    Mirrors BatchEvalPlanner: the same compositions, ids and score history.
    """
    by_id = {s.id: s for s in samples}
    history: dict[str, list[float | None]] = {sid: [] for sid in by_id}
    found: dict[tuple[int, int], tuple[str, str | None]] = {}
    for round_index in range(1, cfg.rounds + 1):
        composition = compose_round(
            list(by_id),
            round_index,
            batch_size=cfg.batch_size,
            strategy=cfg.strategy,
            means=running_means(history),
            seed=(seed, criterion.name, scorer.name),
        )
        scored: list[tuple[str, float | None]] = []
        complete = True
        for index, ids in enumerate(composition):
            members = tuple(by_id[sid] for sid in ids)
            bid = batch_id(round_index, criterion, scorer, members, template, cfg)
            batch = Batch(bid, round_index, index, criterion, scorer, members)
            logged = [rows.get(batch.row_id(s)) for s in members]
            statuses = [row[0] if row is not None else None for row in logged]
            state: str | None = None
            if all(status in _DONE for status in statuses):
                state = "invalid" if "invalid" in statuses else "done"
                scores = [row[1] if row is not None else None for row in logged]
                scored += [(s.id, x) for s, x in zip(members, scores, strict=True)]
            elif "failed" in statuses:
                state = "failed"
                scored += [(s.id, None) for s in members]
            else:
                complete = False
            found[(round_index, index)] = (bid, state)
        if not complete:
            break
        for sid, score in scored:
            history[sid].append(score)
    return found


def discussion_counts(log: RunLog, context: str | None = None) -> dict[str, int]:
    """Discussions in the log: how many, how they ended, and their calls.

    `logged` discussions are `agreed`, `unresolved` or `in_progress` (no final
    row yet, e.g. interrupted or a call failed); `calls` are the model calls
    they made (initial reviews copied from the reviews table are not calls),
    `failed_calls` of them failed. With `context` (the discussion settings in
    force), discussions logged under other settings count apart as `stale`.
    """
    out = dict.fromkeys(
        ("logged", "agreed", "unresolved", "in_progress", "stale", "calls", "failed_calls"), 0
    )
    if _DISCUSSIONS not in TABLES:
        return out
    frame = log.read(_DISCUSSIONS)
    if not frame.height:
        return out
    if context is not None:
        out["stale"] = frame.filter(pl.col("context") != context)["discussion_id"].n_unique()
        frame = frame.filter(pl.col("context") == context)
    finals = frame.filter(pl.col("kind") == "final")
    calls = frame.filter(pl.col("kind").is_in(["initial", "turn"]) & pl.col("review_id").is_null())
    out["logged"] = frame["discussion_id"].n_unique()
    out["agreed"] = int((finals["outcome"] == "agreed").sum())
    out["unresolved"] = int((finals["outcome"] == "unresolved").sum())
    out["in_progress"] = out["logged"] - finals["discussion_id"].n_unique()
    out["calls"] = calls.height
    out["failed_calls"] = int((calls["status"] == "failed").sum())
    return out
