"""Benchmark of arena.rank on 1,000,000 synthetic reviews (20 models, all reviewing).

Times, on the same data in one run:
  (a) `seconds`: encode the reviews, PeerRank weighted win rates to the fixed
      point, Bradley-Terry with 200 bootstrap rounds over questions (weights
      refitted per round), and every diagnostic, i.e. `rank_reviews` minus Elo
      (best of 3 runs);
  (b) `baseline_seconds`: a plain per-row Python loop doing the same weighted
      win-rate iterations to the same tolerance, the way the PRD paper's
      notebook does (rows of the frame, dictionaries keyed by model name);
  and, separately, `elo_seconds`: weighted Elo averaged over 100 random orders
  (sequential by definition).
The last line printed is the JSON summary:
{"reviews", "seconds", "baseline_seconds", "speedup", "elo_seconds"}.
Targets (2-core machine): seconds <= 2, speedup >= 50.

Usage: python benchmarks/bench_rank.py [--reviews N] [--elo-orders N] [--skip-elo]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

# The matrices here are small: BLAS worker threads only add hand-off costs, and
# on a busy machine their spinning makes every product much slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from arena.rank import RankOptions, encode_reviews, rank_reviews, weighted_elo  # noqa: E402

MODELS = 20
TOLERANCE = 1e-9
MAX_ITER = 100
REPEATS = 3


def synthetic_reviews(n: int, seed: int = 0) -> pl.DataFrame:
    """`n` reviews of a full tournament (every ordered pair, every reviewer, per question).

    Verdicts come from latent answer quality plus reviewer noise, position
    bias, self-preference and a tie band; 1% are unreadable (`invalid`).
    Model, verdict and status columns are dictionary-encoded (polars Enum).
    """
    rng = np.random.default_rng(seed)
    names = [f"model-{i:02d}" for i in range(MODELS)]
    skill = np.linspace(-1.5, 1.5, MODELS)
    a, b = np.nonzero(~np.eye(MODELS, dtype=bool))
    per_question = a.size * MODELS
    questions = -(-n // per_question)
    model_a = np.tile(np.repeat(a, MODELS), questions)[:n]
    model_b = np.tile(np.repeat(b, MODELS), questions)[:n]
    reviewer = np.tile(np.tile(np.arange(MODELS), a.size), questions)[:n]
    question = np.repeat(np.arange(questions), per_question)[:n]
    quality = skill + rng.normal(0.0, 0.7, (questions, MODELS))
    noise = np.linspace(0.2, 1.5, MODELS)[rng.permutation(MODELS)]
    margin = quality[question, model_a] - quality[question, model_b] + 0.2
    margin += rng.normal(0.0, 1.0, n) * noise[reviewer]
    margin += 0.5 * ((reviewer == model_a).astype(float) - (reviewer == model_b))
    verdict = np.where(margin > 0.3, 2, np.where(margin < -0.3, 1, 0))  # A, B, tie codes
    invalid = rng.random(n) < 0.01
    verdict[invalid] = 3
    labels = np.array(names)
    model_enum = pl.Enum(names)
    verdict_labels = np.array(["tie", "B", "A", "invalid"])
    return pl.DataFrame(
        {
            "question_id": question.astype(np.int64),
            "model_a": pl.Series(labels[model_a]).cast(model_enum),
            "model_b": pl.Series(labels[model_b]).cast(model_enum),
            "reviewer": pl.Series(labels[reviewer]).cast(model_enum),
            "verdict": pl.Series(verdict_labels[verdict]).cast(pl.Enum(list(verdict_labels))),
            "status": pl.Series(np.where(invalid, "invalid", "ok")).cast(
                pl.Enum(["ok", "invalid"])
            ),
        }
    )


def _baseline_scores(
    rows: list[dict[str, Any]], weights: dict[str, float], contestants: list[str]
) -> dict[str, float]:
    """One pass of Algorithm 2's scoring over the review records (a weighted mean)."""
    score_of = {"A": -1, "B": 1, "tie": 0}
    mean = sum(weights.values()) / len(weights)
    total = dict.fromkeys(contestants, 0.0)
    count = dict.fromkeys(contestants, 0.0)
    for row in rows:
        if row["status"] != "ok" or row["verdict"] not in score_of:
            continue
        score = score_of[row["verdict"]]
        w = weights[row["reviewer"]] / mean
        total[row["model_a"]] += w * (1 - score) / 2
        total[row["model_b"]] += w * (1 + score) / 2
        count[row["model_a"]] += w
        count[row["model_b"]] += w
    return {c: total[c] / count[c] for c in contestants}


def baseline_weighted_win_rates(frame: pl.DataFrame) -> tuple[dict[str, float], int]:
    """PeerRank Algorithm 2 as a plain per-row loop over review records (dicts),
    the way the paper's notebook works on its JSON review files."""
    rows = frame.to_dicts()
    contestants = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    reviewers = sorted({r["reviewer"] for r in rows})
    weights = {r: 1.0 / len(reviewers) for r in reviewers}
    iterations = 0
    while iterations < MAX_ITER:
        iterations += 1
        scores = _baseline_scores(rows, weights, contestants)
        own = {r: scores[r] for r in reviewers if r in scores}
        low, high = min(own.values()), max(own.values())
        if high - low <= 1e-12:
            new = {r: 1.0 / len(reviewers) for r in reviewers}
        else:
            scaled = {r: (s - low) / (high - low) for r, s in own.items()}
            norm = sum(scaled.values())
            scaled = {r: s / norm for r, s in scaled.items()}
            mean_other = sum(scaled.values()) / len(scaled)
            new = {r: scaled.get(r, mean_other) for r in reviewers}
            norm = sum(new.values())
            new = {r: w / norm for r, w in new.items()}
        moved = max(abs(new[r] - weights[r]) for r in reviewers)
        weights = new
        if moved < TOLERANCE:
            break
    return _baseline_scores(rows, weights, contestants), iterations


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--elo-orders", type=int, default=100)
    parser.add_argument("--skip-elo", action="store_true")
    args = parser.parse_args(argv)

    frame = synthetic_reviews(args.reviews)
    options = RankOptions(bootstrap=200, elo=False, tol=TOLERANCE, max_iter=MAX_ITER)
    rank_reviews(encode_reviews(frame.head(20_000)), options)  # warm-up (imports, caches)

    seconds = float("inf")
    for _ in range(REPEATS):  # best of a few: the usual defence against a busy machine
        start = time.perf_counter()
        reviews = encode_reviews(frame)
        ranking = rank_reviews(reviews, options)
        seconds = min(seconds, time.perf_counter() - start)

    start = time.perf_counter()
    baseline, baseline_iterations = baseline_weighted_win_rates(frame)
    baseline_seconds = time.perf_counter() - start

    ours = dict(zip(reviews.contestants, ranking.peerrank.weighted_win_rate.tolist(), strict=True))
    worst = max(abs(ours[name] - baseline[name]) for name in baseline)
    if worst > 1e-9 or baseline_iterations != ranking.peerrank.iterations:
        print(f"MISMATCH: max difference {worst:g}", file=sys.stderr)
        raise SystemExit(1)

    strings = frame.with_columns(pl.col(pl.Enum).cast(pl.String))
    start = time.perf_counter()
    encode_reviews(strings)
    string_encode = time.perf_counter() - start

    elo_seconds = None
    if not args.skip_elo:
        start = time.perf_counter()
        elo = weighted_elo(reviews, orders=args.elo_orders, seed=0)
        elo_seconds = time.perf_counter() - start
        print(f"weighted Elo: {args.elo_orders} orders, {elo.passes} passes", file=sys.stderr)

    print(
        f"PeerRank: {ranking.peerrank.iterations} iterations (baseline agrees to {worst:.1e}); "
        f"encoding the same reviews from plain strings instead takes {string_encode:.3f} s",
        file=sys.stderr,
    )
    summary = {
        "reviews": frame.height,
        "seconds": round(seconds, 4),
        "baseline_seconds": round(baseline_seconds, 3),
        "speedup": round(baseline_seconds / seconds, 1),
        "elo_seconds": None if elo_seconds is None else round(elo_seconds, 2),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
