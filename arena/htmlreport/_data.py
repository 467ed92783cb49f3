"""What the HTML report shows, gathered from a run directory into one object.

Several run directories (the shards of one tournament, `arena run --shard K/N`)
make one report: the leaderboard of their merged reviews (`build_leaderboard`
with every directory, which refuses directories of other tournaments), the
calls of every directory added up, and the most disputed battles of them all
(a battle's reviews all lie in its question's shard). The rating history is
per directory (a shard's snapshots rank that shard alone), so it is left out.

MT-bench single-answer grades (FastChat's `<judge>_single.jsonl`) are no
battles: their report holds FastChat's single-mode table, the object
`arena leaderboard --format json` prints for them, and no `board`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from arena.report import (
    Leaderboard,
    LeaderboardInputError,
    LeaderboardOptions,
    build_leaderboard,
    leaderboard_dict,
    load_reviews_file,
    load_single_grades,
)
from arena.rundir import read_history, snapshot_ids
from arena.viewer import RunData

__all__ = ["DEFAULT_BATTLES", "ReportData", "build_report"]

DEFAULT_BATTLES = 12


@dataclass
class ReportData:
    """A run's leaderboard, diagnostics, history, calls and battles to read.

    `board` is None for MT-bench single-answer grades (no battles to rank):
    `leaderboard` is then their single-mode table (`"kind": "single-answer grades"`).
    """

    directory: Path
    title: str
    generated_at: float
    board: Leaderboard | None
    leaderboard: dict[str, Any]  # the leaderboard JSON (`arena leaderboard --format json`)
    history: list[dict[str, Any]]  # snapshots, oldest first: {"snapshot", "at", "models"}
    battles: list[dict[str, Any]]  # the most disputed battles, in full
    calls: list[dict[str, Any]]  # per table: calls, statuses, tokens, cost
    notes: list[str] = field(default_factory=list)
    # Every directory read: `directory` alone, or the shards of one tournament.
    directories: tuple[Path, ...] = ()
    history_note: str | None = None  # why there is no history (several directories)
    # Imported judgments the report reads instead of a run (`arena report --reviews`).
    reviews_files: tuple[Path, ...] = ()
    # Each model's mean answer length in characters (all turns), where texts are known.
    avg_length: dict[str, float] = field(default_factory=dict)


def _avg_length(runs: Sequence[RunData]) -> dict[str, float]:
    totals: dict[str, tuple[int, int]] = {}
    for run in runs:
        for model, (count, chars) in run.answer_lengths().items():
            seen, total = totals.get(model, (0, 0))
            totals[model] = (seen + count, total + chars)
    return {model: chars / count for model, (count, chars) in totals.items() if count}


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


_CALL_TABLES = ("answers", "reviews", "discussions", "batcheval")
_CALL_COUNTS = ("calls", "ok", "invalid", "failed", "tokens_in", "tokens_out", "cost_usd")
_CALL_DETAILS = ("tokens_cache_read", "tokens_cache_write", "tokens_reasoning")
_SHARD_HISTORY_NOTE = (
    "No rating history: each shard directory keeps its own, of its shard alone "
    "(`arena report DIR` of one directory shows it)."
)


def _merged_calls(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """The calls of every directory, added up per table."""
    totals: dict[str, dict[str, Any]] = {}
    for run in runs:
        for row in run.calls():
            total = totals.setdefault(row["table"], {"table": row["table"]})
            for key in _CALL_COUNTS:
                total[key] = total.get(key, 0) + row[key]
            for key in _CALL_DETAILS:  # None (not reported) unless some directory has it
                if row.get(key) is not None:
                    total[key] = (total.get(key) or 0) + row[key]
                else:
                    total.setdefault(key, None)
    order = {table: k for k, table in enumerate(_CALL_TABLES)}
    return sorted(totals.values(), key=lambda row: order.get(row["table"], len(order)))


def _merged_battles(runs: Sequence[RunData], limit: int) -> list[dict[str, Any]]:
    """The `limit` most disputed battles of several directories, in `RunData.disputed` order.

    Each directory's list is in that order already and a question's battles all
    lie in one directory, so a stable sort by dispute, votes and question keeps
    the order of the answer ids within a question: the order of one directory
    holding every battle.
    """
    battles = [b for run in runs for b in run.disputed(limit)]
    battles.sort(key=lambda b: (-b["dispute"], -sum(b["votes"].values()), b["question"]["id"]))
    return battles[:limit]


def _check_run_directory(root: Path) -> None:
    if not root.is_dir():
        raise LeaderboardInputError(root, "", "no such run directory")
    if not (root / "tournament.json").exists() and not (root / "log").is_dir():
        raise LeaderboardInputError(root, "", "not a run directory (no tournament.json, no log/)")


def _judgments_title(paths: Sequence[Path]) -> str:
    """The report's title: the sources' names, or their count when names repeat or
    are many (57 AlpacaEval folders each hold an `annotations.json`)."""
    names = list(dict.fromkeys(p.name for p in paths))
    if len(names) == len(paths) and len(paths) <= 3:
        return ", ".join(names)
    return f"{len(paths)} judgment sources ({paths[0]}, ...)"


def board_duplicates(options: LeaderboardOptions | None) -> str:
    """The report's battles keep the copies the leaderboard counted (which refused any
    repeat under "error")."""
    chosen = "last" if options is None else options.duplicates
    return "all" if chosen == "error" else chosen


def _judgments_report(
    files: Sequence[str | Path],
    *,
    human_file: str | Path | None,
    options: LeaderboardOptions | None,
    battles: int,
    by: str | None,
    reviews_format: str | None,
    strong_win_weight: float,
) -> ReportData:
    """The report of imported judgments alone: no run, so no history and no calls."""
    paths = tuple(Path(f) for f in files)
    grades = load_single_grades(list(paths))
    if grades is not None:
        return _grades_report(paths, grades, human_file=human_file, options=options, by=by)
    board = build_leaderboard(
        None,
        reviews_file=list(paths),
        human_file=human_file,
        options=options,
        by=by,
        reviews_format=reviews_format,
        strong_win_weight=strong_win_weight,
    )
    judgments = load_reviews_file(
        list(paths),
        format=reviews_format,
        strong_win_weight=strong_win_weight,
        keep_texts=True,
        duplicates=board_duplicates(options),
    )
    run = RunData(paths[0], judgments=judgments)
    return ReportData(
        directory=paths[0],
        title=_judgments_title(paths),
        generated_at=time.time(),
        board=board,
        leaderboard=leaderboard_dict(board),
        history=[],
        battles=run.disputed(battles),
        calls=[],
        directories=(),
        reviews_files=paths,
        avg_length=_avg_length([run]),
    )


def _grades_report(
    paths: tuple[Path, ...],
    grades: dict[str, Any],
    *,
    human_file: str | Path | None,
    options: LeaderboardOptions | None,
    by: str | None,
) -> ReportData:
    """The report of MT-bench single-answer grades: FastChat's single-mode table."""
    pairwise = {
        "--baseline": None if options is None else options.baseline,
        "--human": human_file,
        "--by": by,
    }
    for flag, value in pairwise.items():
        if value is not None:
            raise LeaderboardInputError(
                paths[0],
                flag,
                "ranks pairwise judgments; single-answer grades have no battles to rank",
            )
    return ReportData(
        directory=paths[0],
        title=_judgments_title(paths),
        generated_at=time.time(),
        board=None,
        leaderboard=grades,
        history=[],
        battles=[],
        calls=[],
        reviews_files=paths,
    )


def build_report(
    directory: str | Path | Sequence[str | Path] | None = None,
    *,
    human_file: str | Path | None = None,
    options: LeaderboardOptions | None = None,
    battles: int = DEFAULT_BATTLES,
    by: str | None = None,
    allow_missing_shards: bool = False,
    reviews_file: str | Path | Sequence[str | Path] | None = None,
    reviews_format: str | None = None,
    strong_win_weight: float = 3.0,
) -> ReportData:
    """Everything the report of run directory DIR shows. Raises LeaderboardInputError.

    Several directories (the shards of one tournament) are reported as one, as
    `arena leaderboard DIR1 DIR2 ...` ranks them; directories of different
    tournaments, or that are not run directories, are refused; so are shards
    that are not the whole split, unless `allow_missing_shards` (the report is
    then marked partial).

    `reviews_file` (files or folders of judgments, in any format
    `load_reviews_file` reads, `reviews_format` and `strong_win_weight` as
    there) reports those judgments alone, with no run directory: the
    leaderboard, diagnostics and the most disputed battles (with the
    answers' texts where the files carry them). MT-bench single-answer
    grades make a report of FastChat's single-mode table alone (`board`
    None; `--baseline`, `human_file` and `by` rank battles, so they are
    refused there).
    """
    if reviews_file is not None:
        files = [reviews_file] if isinstance(reviews_file, str | Path) else list(reviews_file)
        if directory is not None or not files:
            raise LeaderboardInputError(
                "arena report", "--reviews", "give judgment files or run directories, not both"
            )
        return _judgments_report(
            files,
            human_file=human_file,
            options=options,
            battles=battles,
            by=by,
            reviews_format=reviews_format,
            strong_win_weight=strong_win_weight,
        )
    if directory is None:
        raise LeaderboardInputError("arena report", "", "give a run directory or --reviews FILE")
    roots = [Path(directory)] if isinstance(directory, str | Path) else [Path(d) for d in directory]
    if not roots:
        raise LeaderboardInputError("arena report", "", "give at least one run directory")
    for root in roots:
        _check_run_directory(root)
    root = roots[0]
    board = build_leaderboard(
        root if len(roots) == 1 else roots,
        human_file=human_file,
        options=options,
        by=by,
        allow_missing_shards=allow_missing_shards,
    )
    runs = [RunData(r) for r in roots]
    several = len(runs) > 1
    return ReportData(
        directory=root,
        title=_title(root),
        generated_at=time.time(),
        board=board,
        leaderboard=leaderboard_dict(board),
        history=_history(root) if not several and (root / "log").is_dir() else [],
        battles=_merged_battles(runs, battles) if several else runs[0].disputed(battles),
        calls=_merged_calls(runs) if several else runs[0].calls(),
        notes=list(dict.fromkeys(note for run in runs for note in run.notes)),
        directories=tuple(roots),
        history_note=_SHARD_HISTORY_NOTE if several else None,
        avg_length=_avg_length(runs),
    )
