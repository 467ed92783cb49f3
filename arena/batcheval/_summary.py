"""BatchEval for the leaderboard: per contestant and criterion, and against the ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from arena.batcheval._aggregate import bootstrap_ci, correlations, win_rates
from arena.batcheval._human import HumanScores, human_agreement, load_human_scores
from arena.batcheval._schema import SCORES_FILE
from arena.batcheval._scores import read_scores
from arena.config import ConfigError
from arena.store import RunLog
from arena.types import CallStatus

__all__ = ["batcheval_summary", "contestant_scores", "run_human_scores"]


def contestant_scores(
    scores: pl.DataFrame, *, n_boot: int = 2000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per contestant and criterion: mean answer score with a bootstrap CI over answers.

    An answer's score is its mean over scorers; answers without any score are
    left out and counted in `unscored_answers`.
    """
    frame = scores.filter(pl.col("model").is_not_null())
    per_answer = frame.group_by(["model", "criterion", "sample_id"]).agg(
        pl.col("score").mean().alias("score")
    )
    rows: list[dict[str, Any]] = []
    for (model, criterion), group in sorted(
        per_answer.group_by(["model", "criterion"]), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))
    ):
        values = [v for v in group.sort("sample_id")["score"].to_list() if v is not None]
        row: dict[str, Any] = {
            "model": model,
            "criterion": criterion,
            "answers": len(values),
            "unscored_answers": group.height - len(values),
            "mean": None,
            "ci_low": None,
            "ci_high": None,
        }
        if values:
            row["mean"] = sum(values) / len(values)
            row["ci_low"], row["ci_high"] = bootstrap_ci(values, n_boot=n_boot, seed=seed)
        rows.append(row)
    return rows


RunDirs = str | Path | Sequence[str | Path]


def _directories(run_dir: RunDirs) -> list[Path]:
    return [Path(run_dir)] if isinstance(run_dir, str | Path) else [Path(d) for d in run_dir]


def _scores_of(directories: list[Path]) -> pl.DataFrame | None:
    """The BatchEval scores of one run directory, or of the shards of one tournament
    together (each shard scores the answers of its own questions)."""
    found = [s for s in (read_scores(d / SCORES_FILE) for d in directories) if s is not None]
    if not found:
        return None
    return found[0] if len(found) == 1 else pl.concat(found, how="diagonal_relaxed")


def _pairwise_win_rates(directories: list[Path]) -> dict[str, float]:
    columns = ["model_a", "model_b", "verdict", "status"]
    logs = [RunLog(d) for d in directories if (d / "log").is_dir()]
    frames = [f for f in (log.read("reviews", columns=columns) for log in logs) if f.height]
    if not frames:
        return {}
    reviews = pl.concat(frames)
    ok = reviews.filter(pl.col("status") == CallStatus.OK.value)
    return win_rates(
        list(
            zip(
                ok["model_a"].to_list(),
                ok["model_b"].to_list(),
                ok["verdict"].to_list(),
                strict=True,
            )
        )
    )


def run_human_scores(run_dir: RunDirs, path: str | Path) -> HumanScores:
    """Human scores of a run's answers (`question_id`, `model` or answer `id`); ConfigError if bad.

    The criteria are those of the run's BatchEval scores (of all its shard
    directories, when `run_dir` names several).
    """
    directories = _directories(run_dir)
    scores = _scores_of(directories)
    if scores is None or scores.height == 0:
        where = ", ".join(str(d) for d in directories)
        raise ConfigError(path, "", f"the run {where} has no BatchEval scores to compare with")
    return load_human_scores(Path(path), sorted(set(scores["criterion"].to_list())))


def batcheval_summary(
    run_dir: RunDirs,
    pairwise: Mapping[str, float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    human: HumanScores | None = None,
) -> dict[str, Any] | None:
    """BatchEval results of a tournament run directory (or of the shard directories
    of one tournament, read as one); None when it has none.

    `pairwise` is the pairwise rating per contestant (higher is better) to
    correlate with; by default the plain win rate from the reviews table.
    With `human` scores (keyed by `question_id` and `model`, or by answer id),
    `human` holds their per-answer Pearson and Spearman correlations with the
    BatchEval scores, per criterion, with bootstrap intervals.
    """
    directories = _directories(run_dir)
    scores = _scores_of(directories)
    if scores is None or scores.filter(pl.col("model").is_not_null()).height == 0:
        return None
    rows = contestant_scores(scores, n_boot=n_boot, seed=seed)
    against = "given" if pairwise is not None else "win_rate"
    ranking = dict(pairwise) if pairwise is not None else _pairwise_win_rates(directories)
    criteria = sorted({r["criterion"] for r in rows})
    correlation = []
    for criterion in criteria:
        means = {
            r["model"]: r["mean"]
            for r in rows
            if r["criterion"] == criterion and r["mean"] is not None
        }
        correlation.append({"criterion": criterion, **correlations(means, ranking)})
    return {
        "criteria": criteria,
        "scorers": sorted(set(scores["scorer"].to_list())),
        "rows": rows,
        "correlation": correlation,
        "against": against,
        "pairwise": ranking,
        "unscored": int(scores["rounds_missing"].sum()),
        "human": None if human is None else human_agreement(scores, human, seed=seed),
    }
