"""How agreed discussion verdicts enter the ranking (pure functions over data frames).

- `replace`: every review of a discussed battle (question, model A, model B)
  that has a result takes the discussion's verdict; failed reviews stay failed.
  When several discussions of one battle agreed (all-pairs) on different
  verdicts, their mean score decides (-1 A, 0 tie, +1 B; a zero mean is a tie).
- `add`: each agreed discussion adds `weight` identical reviews by the
  pseudo-reviewer `(discussion)`, which does not compete, so PeerRank gives it
  the mean weight of the reviewers that do.
Unresolved discussions change nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

import polars as pl

from arena.discuss._schema import DISCUSSION_REVIEWER

__all__ = ["Outcome", "agreed_verdicts", "apply_discussions"]

Outcome = Literal["replace", "add"]
_SCORE = {"A": -1, "B": 1, "tie": 0}
_KEY = ("question_id", "model_a", "model_b")


def agreed_verdicts(discussions: pl.DataFrame, context: str | None = None) -> pl.DataFrame:
    """One row per agreed discussion: `discussion_id, question_id, model_a, model_b, verdict`.

    Reads the final rows of a discussions table; with `context`, only those of it.
    """
    schema = {
        "discussion_id": pl.String,
        "question_id": pl.String,
        "model_a": pl.String,
        "model_b": pl.String,
        "answer_a_id": pl.String,
        "answer_b_id": pl.String,
        "verdict": pl.String,
    }
    if discussions.height == 0:
        return pl.DataFrame(schema=schema)
    finals = discussions.filter(
        (pl.col("kind") == "final")
        & (pl.col("outcome") == "agreed")
        & pl.col("verdict").is_in(list(_SCORE))
    )
    if context is not None:
        finals = finals.filter(pl.col("context") == context)
    return finals.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("discussion_id")


def _combined(verdicts: list[str]) -> str:
    mean = sum(_SCORE[v] for v in verdicts) / len(verdicts)
    return "A" if mean < 0 else "B" if mean > 0 else "tie"


def apply_discussions(
    reviews: pl.DataFrame,
    discussions: pl.DataFrame,
    *,
    outcome: Outcome = "replace",
    weight: int = 1,
    context: str | None = None,
) -> pl.DataFrame:
    """The reviews the ranking should use: `reviews` with the agreed discussion verdicts applied.

    `reviews` has the reviews table's columns (at least `question_id, model_a,
    model_b, reviewer, verdict`); the result has the same columns and types.
    `discussions` is the discussions table; `context` restricts it to the
    discussions of one configuration (see discussion.json).
    """
    if outcome not in ("replace", "add"):
        raise ValueError(f"unknown outcome {outcome!r} (expected replace or add)")
    if weight < 1:
        raise ValueError("weight must be at least 1")
    agreed = agreed_verdicts(discussions, context)
    if agreed.height == 0 or (reviews.height == 0 and outcome == "replace"):
        return reviews
    if outcome == "replace":
        return _replace(reviews, agreed)
    return _add(reviews, agreed, weight)


def _replace(reviews: pl.DataFrame, agreed: pl.DataFrame) -> pl.DataFrame:
    by_battle: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for q, a, b, v in agreed.select(*_KEY, "verdict").iter_rows():
        by_battle[(q, a, b)].append(v)
    table = pl.DataFrame(
        [(*key, _combined(vs)) for key, vs in by_battle.items()],
        orient="row",
        schema={
            "question_id": pl.String,
            "model_a": pl.String,
            "model_b": pl.String,
            "_discussed": pl.String,
        },
    )
    columns = reviews.columns
    joined = reviews.with_columns(pl.col("question_id").cast(pl.String).alias("_qid")).join(
        table.rename({"question_id": "_qid"}),
        on=["_qid", "model_a", "model_b"],
        how="left",
        maintain_order="left",
    )
    has_result = pl.col("_discussed").is_not_null()
    if "status" in columns:
        has_result = has_result & (pl.col("status") != "failed")
    updates = [
        pl.when(has_result)
        .then(pl.col("_discussed"))
        .otherwise(pl.col("verdict"))
        .cast(reviews.schema["verdict"])
        .alias("verdict")
    ]
    if "status" in columns:
        updates.append(
            pl.when(has_result)
            .then(pl.lit("ok"))
            .otherwise(pl.col("status"))
            .cast(reviews.schema["status"])
            .alias("status")
        )
    for graded in ("p_a", "weight"):  # a graded verdict the discussion replaced is gone
        if graded in columns:
            updates.append(
                pl.when(has_result)
                .then(None)
                .otherwise(pl.col(graded))
                .cast(reviews.schema[graded])
                .alias(graded)
            )
    return joined.with_columns(updates).select(columns)


def _add(reviews: pl.DataFrame, agreed: pl.DataFrame, weight: int) -> pl.DataFrame:
    rows: list[dict[str, Any]] = []
    for record in agreed.iter_rows(named=True):
        for k in range(weight):
            row: dict[str, Any] = dict.fromkeys(reviews.columns)
            row.update({c: record[c] for c in ("model_a", "model_b", "verdict")})
            row.update(question_id=record["question_id"], reviewer=DISCUSSION_REVIEWER)
            if "id" in row:
                row["id"] = f"{record['discussion_id']}#{k + 1}"
            if "status" in row:
                row["status"] = "ok"
            for column in ("answer_a_id", "answer_b_id"):
                if column in row:
                    row[column] = record[column]
            rows.append(row)
    strings = {
        c: (
            pl.String
            if c
            in (
                "question_id",
                "model_a",
                "model_b",
                "reviewer",
                "verdict",
                "id",
                "status",
                "answer_a_id",
                "answer_b_id",
            )
            else reviews.schema[c]
        )
        for c in reviews.columns
    }
    added = pl.DataFrame(rows, schema=strings).cast(reviews.schema, strict=False)
    return pl.concat([reviews, added], how="vertical")
