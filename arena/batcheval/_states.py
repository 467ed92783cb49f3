"""Where the BatchEval batches of a tournament's plan stand: done, failed, stale, pending.

`arena plan` and `arena status` count BatchEval in batch calls: the stage's
batches are found as the stage finds them, replaying its rounds from the
logged scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from arena.batcheval._compose import compose_round, ordering_scores
from arena.batcheval._planner import Scorer, make_batch
from arena.batcheval._prompt import load_template
from arena.batcheval._samples import Sample
from arena.batcheval._schema import TABLE
from arena.batcheval._tournament import AnswerRef, tournament_samples
from arena.config import BatchEvalConfig, CriterionConfig, ExamplePool, Tournament
from arena.store import RunLog

__all__ = ["BATCHEVAL_SCHEMA", "batcheval_states", "batches_outside"]

_DONE = ("ok", "invalid")

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
    logged = log.read(TABLE) if log is not None else pl.DataFrame()
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
    pool = t.batcheval_examples
    template = load_template(cfg, t.path, examples=pool is not None) if ready else ""
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
                _replay(
                    cfg, template, criterion, scorer, samples, rows, seed=t.config.seed, pool=pool
                )
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
    pool: ExamplePool | None = None,
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
            means=ordering_scores(history, cfg.composition),
            composition=cfg.composition,
            seed=(seed, criterion.name, scorer.name),
        )
        scored: list[tuple[str, float | None]] = []
        complete = True
        for index, ids in enumerate(composition):
            members = tuple(by_id[sid] for sid in ids)
            batch = make_batch(round_index, index, criterion, scorer, members, template, cfg, pool)
            bid = batch.id
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


def batches_outside(batcheval: pl.DataFrame, log: RunLog) -> dict[str, int]:
    """Logged batch calls that are not batches of the plan: in a planned batch's place, or not."""
    logged = log.read(TABLE)
    keys = ["criterion", "scorer", "round", "batch_index"]
    batches = logged.select("batch_id", *keys).unique("batch_id")
    outside = batches.join(
        batcheval.select(pl.col("id").alias("batch_id")).drop_nulls(), on="batch_id", how="anti"
    )
    superseded = outside.join(batcheval.select(keys).unique(), on=keys, how="semi")
    return {"stale": superseded.height, "unused": outside.height - superseded.height}
