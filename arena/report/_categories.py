"""Rankings within each question category (`arena leaderboard --by category`).

A run directory's categories are its questions' `category` fields (MT-bench's
writing / math / coding ..., arena-hard's, AlpacaEval's `dataset`), read from
`tournament.json` (`categories`) or, for runs written before it kept them,
from the tournament YAML it names; an imported reviews file needs a
`category` column. Each category is ranked on its own reviews with the same
options as the whole leaderboard; a question without a category counts as
`(none)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arena.config import ConfigError

NO_CATEGORY = "(none)"
# `--baseline per-category`: each category against its own baseline, the model that
# takes part in every battle of the category (arena-hard v2.0: o3-mini-2025-01-31 for
# hard prompts, coding and math, gemini-2.0-flash-001 for creative writing).
PER_CATEGORY_BASELINE = "per-category"
# The per-model figures each category reports (from the leaderboard's JSON rows).
CATEGORY_FIELDS = (
    "model",
    "bt",
    "bt_ci_low",
    "bt_ci_high",
    "win_rate",
    "weighted_win_rate",
    "wins",
    "ties",
    "losses",
)


@dataclass(frozen=True)
class CategoryRanking:
    """One category's ranking: its size and one row per model, best first."""

    category: str
    questions: int
    reviews: int
    models: list[dict[str, Any]]
    baseline: str | None = None  # `--baseline per-category`: the category's own baseline
    vs_baseline: list[dict[str, Any]] | None = None  # its JSON `vs_baseline` rows

    def to_json(self) -> dict[str, Any]:
        out = {"questions": self.questions, "reviews": self.reviews, "models": self.models}
        if self.baseline is not None:
            out |= {"baseline": self.baseline, "vs_baseline": self.vs_baseline}
        return out


def category_baseline(reviews: pl.DataFrame, category: str) -> str:
    """The model that takes part in every battle of a category's `reviews` (its baseline
    under `--baseline per-category`); ValueError naming the category when none does."""
    first = reviews.row(0, named=True)
    for model in dict.fromkeys((first["model_a"], first["model_b"])):
        if ((reviews["model_a"] == model) | (reviews["model_b"] == model)).all():
            return str(model)
    raise ValueError(
        f"--baseline per-category: no model takes part in every battle of category "
        f"{category!r}, so it has no baseline (arena-hard's judgments name one per category)"
    )


def run_categories(run_dir: Path, tournament: Mapping[str, Any] | None) -> dict[str, str]:
    """Question id -> category of a run (ConfigError when they cannot be known)."""
    if tournament is not None and isinstance(tournament.get("categories"), dict):
        return {str(k): str(v) for k, v in tournament["categories"].items()}
    config = None if tournament is None else tournament.get("config_path")
    if not isinstance(config, str):
        raise ConfigError(run_dir, "", "--by category: the run names no tournament YAML")
    from arena.config import load_tournament  # here: pydantic only for such an old run

    t = load_tournament(config)
    return {q.id: q.category or NO_CATEGORY for q in t.questions}


def category_column(reviews: pl.DataFrame, categories: Mapping[str, str]) -> pl.Series:
    """Each review's category, from its question."""
    return (
        reviews["question_id"]
        .cast(pl.String)
        .replace_strict(dict(categories), default=NO_CATEGORY, return_dtype=pl.String)
    )


def rank_categories(
    reviews: pl.DataFrame,
    category: pl.Series,
    rank: Callable[[pl.DataFrame, str], dict[str, Any]],
) -> list[CategoryRanking]:
    """Rank each category's reviews with `rank` (a frame and the category's name -> the
    leaderboard's JSON; with `baseline` and `vs_baseline` when it names a baseline)."""
    out: list[CategoryRanking] = []
    for name in sorted(set(category.drop_nulls().to_list())):
        part = reviews.filter(category == name)
        board = rank(part, name)
        models = [
            {"rank": i, **{k: row.get(k) for k in CATEGORY_FIELDS}}
            for i, row in enumerate(board["models"], 1)
        ]
        out.append(
            CategoryRanking(
                name,
                part["question_id"].n_unique(),
                part.height,
                models,
                board.get("baseline"),
                board.get("vs_baseline"),
            )
        )
    return out


def category_rows(rankings: list[CategoryRanking]) -> tuple[list[str], list[list[str]]]:
    """A compact table: one row per model, one `BT (#rank)` column per category (with a
    per-category baseline: the win rate against it)."""
    names = list(dict.fromkeys(m["model"] for c in rankings for m in c.models))
    header = [
        "model",
        *(
            f"{c.category} ({c.questions}q)" + (f" win vs {c.baseline}" if c.baseline else "")
            for c in rankings
        ),
    ]
    rows: list[list[str]] = []
    for name in names:
        cells = [name]
        for c in rankings:
            if c.baseline is not None:
                rate = next((r for r in c.vs_baseline or [] if r.get("model") == name), None)
                win = None if rate is None else rate.get("win_rate")
                cells.append("-" if win is None else f"{win:.3f}")
                continue
            found = next((m for m in c.models if m["model"] == name), None)
            bt = None if found is None else found.get("bt")
            cells.append("-" if found is None or bt is None else f"{bt:.0f} (#{found['rank']})")
        rows.append(cells)
    return header, rows
