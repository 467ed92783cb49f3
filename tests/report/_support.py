"""Run directories written through the real store, and review files on disk."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from arena.store import RunLog
from tests.rank._frames import random_reviews

JSON_KEYS = {
    "models",
    "reviewer_weights",
    "weighting",
    "bt_intervals",
    "reliability",
    "iterations",
    "peerrank",
    "neighbours",
    "style_control",
    "diagnostics",
    "counts",
}
MODEL_KEYS = {
    "model",
    "rank",
    "rank_low",
    "rank_high",
    "group",
    "win_rate_ci_low",
    "win_rate_ci_high",
    "weighted_win_rate_ci_low",
    "weighted_win_rate_ci_high",
    "elo_ci_low",
    "elo_ci_high",
    "elo_order_error",
    "battles",
    "questions",
    "few_data",
    "win_rate",
    "weighted_win_rate",
    "elo",
    "bt",
    "bt_ci_low",
    "bt_ci_high",
    "wins",
    "ties",
    "losses",
}
REVIEWER_KEYS = {
    "reviewer",
    "position_a_share",
    "swap_consistency",
    "self_preference",
    "tie_rate",
    "invalid_rate",
    "length_bias",
    "battles",
}


def write_run(
    directory: Path,
    reviews: pl.DataFrame,
    *,
    contestants: Sequence[str],
    reviewers: Sequence[str] | None = None,
    skills: dict[str, float | None] | None = None,
    answers_cost: float = 0.0,
) -> Path:
    """A run directory: tournament.json plus the log written by a LogWriter."""
    directory.mkdir(parents=True, exist_ok=True)
    models = {
        name: {
            "provider": "sim",
            "provider_type": "sim",
            "model": name,
            "sim_skill": (skills or {}).get(name),
        }
        for name in {*contestants, *(reviewers or contestants)}
    }
    snapshot = {
        "name": "test",
        "config_hash": "x",
        "contestants": list(contestants),
        "reviewers": list(reviewers or contestants),
        "models": models,
    }
    (directory / "tournament.json").write_text(json.dumps(snapshot))

    async def write() -> None:
        async with RunLog(directory).writer() as writer:
            for k, row in enumerate(reviews.iter_rows(named=True)):
                record: dict[str, Any] = {
                    "id": f"r-{k}",
                    "status": row["status"],
                    "question_id": row["question_id"],
                    "model_a": row["model_a"],
                    "model_b": row["model_b"],
                    "reviewer": row["reviewer"],
                    "verdict": row["verdict"],
                    "cost_usd": 0.001,
                }
                await writer.write("reviews", record)
            await writer.write(
                "answers", {"id": "a-0", "status": "ok", "model": "m0", "cost_usd": answers_cost}
            )

    asyncio.run(write())
    return directory


def sample_reviews(seed: int = 0) -> pl.DataFrame:
    """Four contestants, every reviewer a contestant, 6 questions."""
    return random_reviews(models=4, questions=6, seed=seed)
