"""Tiny review tables for known-answer tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

Row = tuple[str, str, str, str, str | None] | tuple[str, str, str, str, str | None, str]


def frame(rows: Sequence[Row]) -> pl.DataFrame:
    """(question, model_a, model_b, reviewer, verdict[, status]) rows as a reviews frame."""
    status = [row[5] if len(row) > 5 else ("failed" if row[4] is None else "ok") for row in rows]
    return pl.DataFrame(
        {
            "question_id": [row[0] for row in rows],
            "model_a": [row[1] for row in rows],
            "model_b": [row[2] for row in rows],
            "reviewer": [row[3] for row in rows],
            "verdict": [row[4] for row in rows],
            "status": status,
        },
        schema={
            "question_id": pl.String,
            "model_a": pl.String,
            "model_b": pl.String,
            "reviewer": pl.String,
            "verdict": pl.String,
            "status": pl.String,
        },
    )


def swapped(reviews: pl.DataFrame) -> pl.DataFrame:
    """The same judgments with positions swapped (model_a <-> model_b, verdict A <-> B)."""
    return reviews.with_columns(
        model_a=pl.col("model_b"),
        model_b=pl.col("model_a"),
        verdict=pl.col("verdict").replace({"A": "B", "B": "A"}),
    )


def random_reviews(
    *,
    models: int = 4,
    questions: int = 12,
    reviewers: int | None = None,
    judges: int = 0,
    seed: int = 0,
    tie_band: float = 0.3,
) -> pl.DataFrame:
    """A full tournament (both orders, every reviewer) with noisy BT-like verdicts."""
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(models)]
    skill = np.linspace(-1.0, 1.0, models)
    panel = names[: reviewers if reviewers is not None else models] + [
        f"judge{k}" for k in range(judges)
    ]
    rows: list[Row] = []
    for q in range(questions):
        quality = skill + rng.normal(0, 0.5, models)
        for i in range(models):
            for j in range(models):
                if i == j:
                    continue
                for reviewer in panel:
                    diff = quality[i] - quality[j] + rng.normal(0, 0.7) + 0.1
                    verdict = "A" if diff > tie_band else "B" if diff < -tie_band else "tie"
                    rows.append((f"q{q}", names[i], names[j], reviewer, verdict))
    return frame(rows)
