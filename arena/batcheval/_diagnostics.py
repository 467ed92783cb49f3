"""BatchEval's diagnostics: batch bias and score entropy, round by round.

The BatchEval paper argues for heterogeneous batches with two measures. arena
computes its own formulation of each from the scores every sample got in each
round and the batch it was scored in (per criterion and scorer); they need no
human scores:

- Batch bias (what the paper's Eq. 3 measures): a batch pulls the scores of its samples away
  from where they usually lie. A sample's usual level is its mean score over
  all its rounds; the bias of a batch is the mean, over its samples, of the
  sample's score in that batch minus its usual level. Per round, `batch_bias`
  is the mean absolute bias over the round's batches (0: no batch moved its
  samples), and `bias_vs_quality` the Pearson correlation, over the round's
  batches, between a batch's bias and its quality (the mean usual level of its
  samples). A negative correlation is the contrast effect: a batch of weak
  samples scores them up, a batch of strong ones scores them down. Batches
  that span the quality range (heterogeneous) all have about the same quality,
  so no batch can move its samples much.
- Score entropy across rounds (what the paper's Figure 3 plots): the Shannon entropy, in
  bits, of the distribution of the samples' scores (rounded to two decimals),
  of round r alone (`entropy_round`) and of each sample's mean over rounds
  1..r (`entropy_mean_to_round`, the final score a run of r rounds gives). More
  distinct scores mean finer distinctions between samples; averaging rounds
  whose batches differ raises it round by round. The maximum is log2 of the
  number of samples.

A sample without a score in some round (unreadable) counts in the rounds it
has. `batch_diagnostics` is pure; `logged_batches` picks from a run
directory's `batcheval` table the batch each sample was last scored in, per
round.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import polars as pl

__all__ = ["batch_diagnostics", "logged_batches", "score_entropy"]

_COLUMNS = ("criterion", "scorer", "round", "batch_id", "sample_id", "score")


def score_entropy(scores: list[float]) -> float | None:
    """Shannon entropy (bits) of the scores rounded to two decimals; None without scores."""
    if not scores:
        return None
    counts = Counter(round(s, 2) for s in scores)
    n = len(scores)
    return float(-sum(c / n * math.log2(c / n) for c in counts.values()) + 0.0)


def _pearson(a: list[float], b: list[float]) -> float | None:
    if len(a) < 3:
        return None
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    dx, dy = x - x.mean(), y - y.mean()
    denom = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return float((dx * dy).sum()) / denom if denom > 0 else None


def batch_diagnostics(rows: pl.DataFrame) -> list[dict[str, Any]]:
    """Batch bias and score entropy per criterion, scorer and round (see the module).

    `rows`: one row per sample scored in a batch of a round, with `criterion`,
    `scorer`, `round`, `batch_id`, `sample_id` and `score` (null rows are
    ignored). Each result row: `criterion`, `scorer`, `round`, `batches`,
    `samples`, `batch_bias`, `bias_vs_quality`, `entropy_round`,
    `entropy_mean_to_round`.
    """
    missing = [c for c in _COLUMNS if c not in rows.columns]
    if missing:
        raise ValueError(f"batch diagnostics need the columns {', '.join(missing)}")
    scored = rows.select(_COLUMNS).drop_nulls("score")
    # (criterion, scorer) -> round -> batch -> [(sample, score)]
    grouped: dict[tuple[str, str], dict[int, dict[str, list[tuple[str, float]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for criterion, scorer, round_index, bid, sid, score in scored.iter_rows():
        grouped[(criterion, scorer)][int(round_index)][bid].append((sid, float(score)))
    out: list[dict[str, Any]] = []
    for (criterion, scorer), rounds in sorted(grouped.items()):
        history: dict[str, list[float]] = defaultdict(list)  # sample -> scores by round
        for round_index in sorted(rounds):
            for members in rounds[round_index].values():
                for sid, score in members:
                    history[sid].append(score)
        usual = {sid: sum(v) / len(v) for sid, v in history.items()}
        so_far: dict[str, list[float]] = defaultdict(list)
        for round_index in sorted(rounds):
            biases: list[float] = []
            qualities: list[float] = []
            this_round: list[float] = []
            for members in rounds[round_index].values():
                biases.append(sum(score - usual[sid] for sid, score in members) / len(members))
                qualities.append(sum(usual[sid] for sid, _ in members) / len(members))
                for sid, score in members:
                    this_round.append(score)
                    so_far[sid].append(score)
            means = [sum(v) / len(v) for v in so_far.values()]
            out.append(
                {
                    "criterion": criterion,
                    "scorer": scorer,
                    "round": round_index,
                    "batches": len(biases),
                    "samples": len(this_round),
                    "batch_bias": sum(abs(b) for b in biases) / len(biases),
                    "bias_vs_quality": _pearson(biases, qualities),
                    "entropy_round": score_entropy(this_round),
                    "entropy_mean_to_round": score_entropy(means),
                }
            )
    return out


def logged_batches(
    table: pl.DataFrame,
    samples: set[str],
    criteria: set[str],
    scorers: set[str],
    rounds: int,
) -> pl.DataFrame:
    """The rows of a `batcheval` log table the diagnostics read, for one run's settings.

    Scored rows (status ok or invalid, a score) of the given samples, criteria,
    scorers and rounds 1..`rounds`; where a sample was scored in several
    batches of one round (a directory reused with other settings), the one
    logged last.
    """
    if not table.height:
        return pl.DataFrame(schema={c: table.schema.get(c, pl.String) for c in _COLUMNS})
    return (
        table.filter(
            pl.col("status").is_in(["ok", "invalid"])
            & pl.col("score").is_not_null()
            & pl.col("sample_id").is_in(list(samples))
            & pl.col("criterion").is_in(list(criteria))
            & pl.col("scorer").is_in(list(scorers))
            & pl.col("round").is_between(1, rounds)
        )
        .sort("finished_at", nulls_last=False)
        .unique(["criterion", "scorer", "round", "sample_id"], keep="last", maintain_order=True)
        .select(_COLUMNS)
    )
