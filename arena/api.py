"""The Python API: `arena.run`, `arena.leaderboard`, `arena.plan` (notebooks, other tools).

The commands `arena run`, `arena leaderboard --format json` and `arena plan
--json` as functions: the same library code, the same files in the run
directory, the same JSON. Nothing here exits the process or prints a result:
bad input raises an `arena.ArenaError` (`arena.errors`), and a finished run
returns its `RunSummary` (partial, budget-stopped or complete).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from arena.config import Tournament, load_tournament
from arena.errors import ArenaInputError, ArenaStorageError, PreflightError
from arena.formats import JUDGMENT_FORMATS
from arena.report import Leaderboard as Board
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict, render_markdown
from arena.runner import RunSummary

__all__ = ["Leaderboard", "PreflightError", "leaderboard", "plan", "run"]

_PathLike = str | os.PathLike[str]


def _tournament(config: _PathLike | Tournament, out: _PathLike | None) -> Tournament:
    if isinstance(config, Tournament):
        if out is None:
            return config
        return dataclasses.replace(config, output_dir=Path(out))
    # ConfigError names the file, key and problem
    return load_tournament(Path(config), None if out is None else Path(out))


def run(
    config: _PathLike | Tournament,
    out: _PathLike | None = None,
    *,
    budget: float | None = None,
    limit: int | None = None,
    shard: str | tuple[int, int] | None = None,
    tag: str | None = None,
    progress: bool = False,
    batch: bool = False,
) -> RunSummary:
    """Run or resume a tournament, as `arena run`: the same run directory, log and history.

    `config`: a tournament YAML (or a loaded `Tournament`); `out`: the output
    directory (default: the YAML's `output`, else runs/<name>). `budget`: this
    run's limit in USD; `limit`: only the first N questions (a smoke run, no
    history snapshot); `shard`: "K/N" or (K, N); `tag`: the history snapshot's
    tag; `progress`: a line of figures on stderr every 10 s; `batch`: send the calls
    of every openai, anthropic and gemini provider as batch jobs (`--batch`). These
    are the settings of `arena.engine.RunOptions`, as `arena run`'s flags.

    Returns the `RunSummary` (`completed`, `failed`, `pending`, `budget_stopped`,
    `by_stage`, `errors`, ...). Raises `ConfigError` for a bad YAML,
    `PreflightError` when it cannot start, `LockHeld` when another run holds the
    directory, `ArenaStorageError` when the log cannot be written (rows logged
    before are kept), all `arena.ArenaError`. Ctrl-C raises `KeyboardInterrupt`
    after the calls in flight were cancelled; what was logged stays.
    """
    from arena.engine import RunOptions, prepare_run, run_directory

    options = RunOptions(
        out=None if out is None else Path(out),
        limit=limit,
        shard=shard,
        batch=batch,
        budget=budget,
        tag=tag,
    )
    t = prepare_run(
        config if isinstance(config, Tournament) else Path(config),
        options,
        warn=lambda line: warnings.warn(line, stacklevel=3),
    )
    shown = None
    if progress:
        from arena.progress import LineView, RunProgress

        shown = RunProgress(LineView(sys.stderr), interval=10.0)
    try:
        done = run_directory(t, budget_usd=budget, progress=shown, tag=tag, history=options.history)
    finally:
        if shown is not None:
            shown.close()
    summary = done.summary
    if summary.storage_error is not None:
        raise ArenaStorageError(
            f"{summary.storage_error}; every row logged before is kept: free space or fix "
            "permissions, then run again"
        )
    return summary


@dataclasses.dataclass(frozen=True, eq=False)
class Leaderboard:
    """A ranked review set: `to_dict()` is `arena leaderboard --format json`'s document,
    `to_polars()` its models, best first; `board` the full `arena.report.Leaderboard`."""

    board: Board

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of `arena leaderboard --format json` (docs/ranking.md)."""
        data: dict[str, Any] = json.loads(self.to_json())
        return data

    def to_json(self) -> str:
        """`to_dict()` as the CLI prints it (indented JSON)."""
        return json.dumps(leaderboard_dict(self.board), indent=2)

    def to_polars(self) -> pl.DataFrame:
        """One row per model, best first, with the columns of the JSON's `models`."""
        return pl.DataFrame(self.to_dict()["models"], infer_schema_length=None)

    def to_markdown(self) -> str:
        """`arena leaderboard --format markdown`."""
        return render_markdown(self.board)

    def _repr_markdown_(self) -> str:  # a notebook shows the table
        return self.to_markdown()


_OPTION_FIELDS = frozenset(f.name for f in dataclasses.fields(LeaderboardOptions))
_CHOICES = {
    "weights": ("peerrank", "equal", "reliability"),
    "intervals": ("sandwich", "bootstrap"),
}
_COUNTS = ("elo_orders", "bootstrap", "elo_bootstrap")


def _options(given: dict[str, Any]) -> LeaderboardOptions:
    unknown = sorted(set(given) - _OPTION_FIELDS)
    if unknown:
        raise TypeError(
            f"leaderboard() got unknown option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_OPTION_FIELDS))})"
        )
    for name, allowed in _CHOICES.items():
        if name in given and given[name] not in allowed:
            raise ArenaInputError(f"{name}: {given[name]!r} is not one of {', '.join(allowed)}")
    for name in _COUNTS:
        value = given.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ArenaInputError(f"{name}: {value!r} is not a whole number >= 0")
    return LeaderboardOptions(**given)


def leaderboard(
    source: _PathLike | Sequence[_PathLike] | None = None,
    *,
    reviews: _PathLike | Sequence[_PathLike] | None = None,
    human: _PathLike | None = None,
    human_scores: _PathLike | None = None,
    by: str | None = None,
    reviews_format: str | None = None,
    strong_win_weight: float = 3.0,
    allow_missing_shards: bool = False,
    **options: Any,
) -> Leaderboard:
    """Rank a run directory (or the directories of a split run, or a reviews file), as
    `arena leaderboard`.

    `reviews`: judgment files or folders to rank instead of the log (`--reviews`);
    `human`: human labels to score the reviewers against (`--human`);
    `human_scores`: human scores for the BatchEval block; `by="category"`: a
    ranking within each question category. `options` are the ranking options,
    as the CLI's defaults: `anchor`, `elo_orders` (100), `bootstrap` (200), `seed`
    (0), `weights` ("reliability"; "peerrank", "equal"), `intervals` ("sandwich";
    "bootstrap"), `elo_bootstrap` (0), `exclude_self` (`--no-self`), `baseline`,
    `balanced`. Raises `LeaderboardInputError` (an `arena.ArenaConfigError`) for
    input it cannot rank, `ArenaInputError` for a bad option value.
    """
    if by not in (None, "category"):
        raise ArenaInputError(f"by: {by!r} is not 'category'")
    if reviews_format is not None and reviews_format not in JUDGMENT_FORMATS:
        raise ArenaInputError(
            f"reviews_format: {reviews_format!r} is not one of {', '.join(JUDGMENT_FORMATS)}"
        )
    if not (math.isfinite(strong_win_weight) and strong_win_weight > 0):
        raise ArenaInputError(f"strong_win_weight: {strong_win_weight} is not a weight > 0")
    if source is None and reviews is None:
        raise ArenaInputError("give a run directory or a reviews file (source or reviews=)")
    if isinstance(source, str | os.PathLike):
        path: Path | list[Path] | None = Path(source)
    else:
        path = None if source is None else [Path(s) for s in source]
        if isinstance(path, list) and len(path) == 1:
            path = path[0]
    files: list[Path] | None = None
    if reviews is not None:
        files = (
            [Path(reviews)] if isinstance(reviews, str | os.PathLike) else list(map(Path, reviews))
        )
    board = build_leaderboard(
        path,
        reviews_file=files,
        human_file=None if human is None else Path(human),
        options=_options(options),
        human_scores_file=None if human_scores is None else Path(human_scores),
        by=by,
        reviews_format=reviews_format,
        strong_win_weight=strong_win_weight,
        allow_missing_shards=allow_missing_shards,
    )
    for warning in board.warnings if board.partial is not None else ():
        warnings.warn(warning, stacklevel=2)
    return Leaderboard(board)


def plan(config: _PathLike | Tournament, out: _PathLike | None = None) -> dict[str, Any]:
    """What a run would call and cost, and how much is done: `arena plan --json`'s document
    (`rows` per provider and model, `total`, `unpriced`, `from_file`, `batcheval`,
    `discussion`, `sampling`). A `Tournament` is planned from its YAML and output
    directory. Models without a price are named in a warning (`warnings`). Raises
    `ConfigError` for a bad YAML."""
    from arena.estimate import estimate_plan, unpriced_warning

    t = _tournament(config, out)
    if isinstance(config, Tournament):  # planned from its YAML, as `arena plan` does
        t = load_tournament(t.path, t.output_dir)
    estimate = estimate_plan(t)
    if estimate.unpriced:
        warnings.warn(unpriced_warning(estimate.unpriced), stacklevel=2)
    data: dict[str, Any] = json.loads(json.dumps(estimate.to_json()))  # as `--json` prints
    return data
