"""What the HTML report shows, gathered from a run directory into one object."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arena.nightly import read_history, snapshot_ids
from arena.report import (
    Leaderboard,
    LeaderboardInputError,
    LeaderboardOptions,
    build_leaderboard,
    leaderboard_dict,
)
from arena.viewer import RunData

__all__ = ["DEFAULT_BATTLES", "ReportData", "build_report", "length_bias", "pair_counts"]

DEFAULT_BATTLES = 12


@dataclass
class ReportData:
    """A run's leaderboard, diagnostics, history, calls and battles to read."""

    directory: Path
    title: str
    generated_at: float
    board: Leaderboard
    leaderboard: dict[str, Any]  # the leaderboard JSON (`arena leaderboard --format json`)
    pair_counts: dict[str, dict[str, int]]  # battles counted between two models, both orders
    length_bias: dict[str, float | None]  # per reviewer: share of decisive wins of the longer
    history: list[dict[str, Any]]  # snapshots, oldest first: {"snapshot", "at", "models"}
    battles: list[dict[str, Any]]  # the most disputed battles, in full
    calls: list[dict[str, Any]]  # per table: calls, statuses, tokens, cost
    notes: list[str] = field(default_factory=list)


def pair_counts(board: Leaderboard) -> dict[str, dict[str, int]]:
    """Counted battles between every two contestants (both orders together)."""
    rs = board.ranking.reviews
    n = len(rs.contestants)
    grid = np.zeros((n, n), dtype=np.int64)
    np.add.at(grid, (rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)), 1)
    grid = grid + grid.T
    names = rs.contestants
    return {names[i]: {names[j]: int(grid[i, j]) for j in range(n) if j != i} for i in range(n)}


def length_bias(data: RunData) -> dict[str, float | None]:
    """Per reviewer: the share of its decisive verdicts (A or B) won by the longer answer.

    Length is the characters of every turn of an answer; battles whose two
    answers are equally long are left out. None when no battle counts.
    """
    lengths = {
        aid: sum(len(t) for t in (row["answer_turns"] or []))
        for aid, row in data.answers.items()
        if row["status"] == "ok"
    }
    if not lengths:
        return {}
    table = pl.DataFrame(
        {"answer_id": list(lengths), "length": list(lengths.values())},
        schema={"answer_id": pl.String, "length": pl.Int64},
    )
    decisive = (
        data.reviews.filter(pl.col("verdict").is_in(["A", "B"]))
        .join(
            table.rename({"answer_id": "answer_a_id", "length": "len_a"}),
            on="answer_a_id",
            how="inner",
        )
        .join(
            table.rename({"answer_id": "answer_b_id", "length": "len_b"}),
            on="answer_b_id",
            how="inner",
        )
        .filter(pl.col("len_a") != pl.col("len_b"))
        .with_columns(
            ((pl.col("verdict") == "A") == (pl.col("len_a") > pl.col("len_b"))).alias("longer_won")
        )
    )
    out: dict[str, float | None] = {r: None for r in data.reviews["reviewer"].unique().to_list()}
    for row in (
        decisive.group_by("reviewer").agg(pl.col("longer_won").mean().alias("share")).iter_rows()
    ):
        out[row[0]] = float(row[1])
    return dict(sorted(out.items()))


def _history(directory: Path) -> list[dict[str, Any]]:
    history = read_history(directory)
    out = []
    for sid in snapshot_ids(history):
        rows = history.filter(pl.col("snapshot") == sid).sort("rank")
        out.append(
            {
                "snapshot": sid,
                "at": float(rows["at"][0]),
                "models": {
                    r["model"]: None if r["bt"] is None or math.isnan(r["bt"]) else float(r["bt"])
                    for r in rows.iter_rows(named=True)
                },
            }
        )
    return out


def _title(directory: Path) -> str:
    try:
        snapshot = json.loads((directory / "tournament.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return directory.name
    name = snapshot.get("name") if isinstance(snapshot, dict) else None
    return name if isinstance(name, str) and name else directory.name


def build_report(
    directory: str | Path,
    *,
    human_file: str | Path | None = None,
    options: LeaderboardOptions | None = None,
    battles: int = DEFAULT_BATTLES,
) -> ReportData:
    """Everything the report of run directory DIR shows. Raises LeaderboardInputError."""
    root = Path(directory)
    if not root.is_dir():
        raise LeaderboardInputError(root, "", "no such run directory")
    board = build_leaderboard(root, human_file=human_file, options=options)
    data = RunData(root)
    return ReportData(
        directory=root,
        title=_title(root),
        generated_at=time.time(),
        board=board,
        leaderboard=leaderboard_dict(board),
        pair_counts=pair_counts(board),
        length_bias=length_bias(data),
        history=_history(root) if (root / "log").is_dir() else [],
        battles=data.disputed(battles),
        calls=data.calls(),
        notes=list(data.notes),
    )
