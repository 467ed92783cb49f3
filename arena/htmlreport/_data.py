"""What the HTML report shows, gathered from a run directory into one object."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

__all__ = ["DEFAULT_BATTLES", "ReportData", "build_report"]

DEFAULT_BATTLES = 12


@dataclass
class ReportData:
    """A run's leaderboard, diagnostics, history, calls and battles to read."""

    directory: Path
    title: str
    generated_at: float
    board: Leaderboard
    leaderboard: dict[str, Any]  # the leaderboard JSON (`arena leaderboard --format json`)
    history: list[dict[str, Any]]  # snapshots, oldest first: {"snapshot", "at", "models"}
    battles: list[dict[str, Any]]  # the most disputed battles, in full
    calls: list[dict[str, Any]]  # per table: calls, statuses, tokens, cost
    notes: list[str] = field(default_factory=list)


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
        history=_history(root) if (root / "log").is_dir() else [],
        battles=data.disputed(battles),
        calls=data.calls(),
        notes=list(data.notes),
    )
