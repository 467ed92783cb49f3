"""Benchmark of arena.rank on 1,000,000 synthetic reviews (20 models, all reviewing).

The reviews are a frame of plain string columns, the types the run log holds
(question_id, model_a, model_b, reviewer, verdict, status), so every figure
includes turning them into codes. Times, on the same data in one run:
  (a) `seconds`: encode the reviews, PeerRank weighted win rates to the fixed
      point, Bradley-Terry with 200 bootstrap rounds over questions (weights
      refitted per round), and every diagnostic, i.e. `rank_reviews` minus Elo;
  (b) `baseline_seconds`: a plain per-row Python loop doing the same weighted
      win-rate iterations to the same tolerance, the way the PRD paper's
      notebook does (rows of the frame as dictionaries keyed by model name),
      its conversion of the frame into those rows included as ours is; (a)
      runs with PeerRank weights (`--weights peerrank`) so that both compute
      the same weighted win rates, which must agree to 1e-9 (else the script
      exits 1 with MISMATCH);
  (c) `elo_seconds`: weighted Elo averaged over 100 random orders, reviewer
      weights re-derived until they settle (the compiled kernel from 50,000
      reviews, on all cores; NumPy below);
  (d) `leaderboard_seconds`: the whole `arena leaderboard --format json`
      computation from the string frame: encoding, win rates, PeerRank, Elo,
      Bradley-Terry with bootstrap intervals, diagnostics, the JSON document.
  (f) `leaderboard_style_seconds`: (d) on the same reviews with the answers'
      style columns (length, headers, lists, bold) that a run log provides, so
      style control runs as it does on every real leaderboard;
  (e) `shuffled_seconds`: (a) on the same rows in a random order, as a log
      written in completion order rather than plan order would hold them.
(a), (b), (d), (e) and (f) are each the best of the same number of runs (3), the usual
defence against a busy machine; Elo is timed once, after a warm-up.
The last line printed is the JSON summary:
{"reviews", "seconds", "baseline_seconds", "speedup", "shuffled_seconds", "shuffled_speedup",
"elo_seconds", "leaderboard_seconds", "elo_cpu_seconds", "leaderboard_cpu_seconds",
"leaderboard_style_seconds", "leaderboard_style_cpu_seconds", "cores"};
the CPU seconds (all threads)
tell what a machine busy with other jobs hid from the wall-clock figures.
Targets (2-core machine): seconds <= 2, speedup >= 50 (shuffled too), elo_seconds and
leaderboard_seconds <= 5.

Usage: python benchmarks/bench_rank.py [--reviews N] [--elo-orders N] [--skip-elo] [--smoke]
--smoke: 20,000 reviews and 10 Elo orders (seconds; what CI runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

# The matrices here are small: BLAS worker threads only add hand-off costs, and
# on a busy machine their spinning makes every product much slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from arena.rank import RankOptions, encode_reviews, rank_reviews, weighted_elo  # noqa: E402
from arena.report import LeaderboardOptions, leaderboard_dict, rank_frame  # noqa: E402

MODELS = 20
TOLERANCE = 1e-9
MAX_ITER = 100
REPEATS = 3
COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict", "status")


def synthetic_reviews(n: int, seed: int = 0) -> pl.DataFrame:
    """`n` reviews of a full tournament (every ordered pair, every reviewer, per question).

    Verdicts come from latent answer quality plus reviewer noise, position
    bias, self-preference and a tie band; 1% are unreadable (`invalid`).
    Every column is a plain string, as in the run log.
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
    verdict_labels = np.array(["tie", "B", "A", "invalid"])
    return pl.DataFrame(
        {
            "question_id": pl.Series(question).cast(pl.String),
            "model_a": labels[model_a],
            "model_b": labels[model_b],
            "reviewer": labels[reviewer],
            "verdict": verdict_labels[verdict],
            "status": np.where(invalid, "invalid", "ok"),
        },
        schema={c: pl.String for c in COLUMNS},
    )


def with_answer_styles(frame: pl.DataFrame, seed: int = 1) -> pl.DataFrame:
    """`frame` plus the answers' style columns a run log yields (`length_a` ... `bold_b`):
    one made-up answer per (question, model), so style control runs as on a real log."""
    rng = np.random.default_rng(seed)
    questions = frame["question_id"].cast(pl.Int64).to_numpy()
    n_questions = int(questions.max()) + 1
    index = {f"model-{i:02d}": i for i in range(MODELS)}
    features = {
        "length": rng.lognormal(7.2, 0.5, (n_questions, MODELS)).round(),
        "headers": rng.poisson(1.0, (n_questions, MODELS)).astype(float),
        "lists": rng.poisson(3.0, (n_questions, MODELS)).astype(float),
        "bold": rng.poisson(1.0, (n_questions, MODELS)).astype(float),
    }
    columns = {}
    for side in ("a", "b"):
        model = frame[f"model_{side}"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
        for name, values in features.items():
            columns[f"{name}_{side}"] = values[questions, model]
    return frame.with_columns(**{name: pl.Series(v) for name, v in columns.items()})


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
    the way the paper's notebook works on its JSON review files (the
    conversion of the frame into those records included)."""
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


def best_of(work: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of `work`, each the least of REPEATS runs."""
    wall = cpu = float("inf")
    for _ in range(REPEATS):
        start, used = time.perf_counter(), time.process_time()
        work()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - used)
    return wall, cpu


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--elo-orders", type=int, default=100)
    parser.add_argument("--skip-elo", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="20,000 reviews, 10 Elo orders")
    args = parser.parse_args(argv)
    if args.smoke:
        args.reviews, args.elo_orders = 20_000, 10

    frame = synthetic_reviews(args.reviews)
    # PeerRank weights: the baseline loop below is PeerRank's Algorithm 2.
    options = RankOptions(
        bootstrap=200, elo=False, tol=TOLERANCE, max_iter=MAX_ITER, weights="peerrank"
    )
    board_options = LeaderboardOptions(elo_orders=args.elo_orders if not args.skip_elo else 0)
    warm = frame.head(20_000)  # warm-up: imports and caches
    rank_reviews(encode_reviews(warm), options)
    leaderboard_dict(rank_frame(warm, source="bench", options=board_options))

    reviews = encode_reviews(frame)
    ranking = rank_reviews(reviews, options)
    seconds, _ = best_of(lambda: rank_reviews(encode_reviews(frame), options))

    # The same frame in a random row order (a log written as calls completed out of
    # plan order): runs of one name, which the encoder takes in one step, are gone.
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=1)
    shuffled_seconds, _ = best_of(lambda: rank_reviews(encode_reviews(shuffled), options))

    baseline, baseline_iterations = baseline_weighted_win_rates(frame)
    baseline_seconds, _ = best_of(lambda: baseline_weighted_win_rates(frame))

    ours = dict(zip(reviews.contestants, ranking.peerrank.weighted_win_rate.tolist(), strict=True))
    worst = max(abs(ours[name] - baseline[name]) for name in baseline)
    if worst > 1e-9 or baseline_iterations != ranking.peerrank.iterations:
        print(f"MISMATCH: max difference {worst:g}", file=sys.stderr)
        raise SystemExit(1)

    elo_seconds = elo_cpu = None
    if not args.skip_elo:
        start, cpu = time.perf_counter(), time.process_time()
        elo = weighted_elo(reviews, orders=args.elo_orders, seed=0)
        elo_seconds = time.perf_counter() - start
        elo_cpu = time.process_time() - cpu
        print(f"weighted Elo: {args.elo_orders} orders, {elo.passes} passes", file=sys.stderr)

    def leaderboard(reviews: pl.DataFrame) -> dict[str, Any]:
        return leaderboard_dict(rank_frame(reviews, source="bench", options=board_options))

    leaderboard_seconds, leaderboard_cpu = best_of(lambda: leaderboard(frame))
    assert len(leaderboard(frame)["models"]) == MODELS

    # The same reviews with the answers' style columns, as a run log gives them:
    # style control (ratings, coefficients, 200 bootstrap rounds) runs too.
    styled = with_answer_styles(frame)
    leaderboard(styled.head(20_000))
    style_seconds, style_cpu = best_of(lambda: leaderboard(styled))
    style_block = leaderboard(styled)["style_control"]
    assert style_block["available"], style_block

    print(
        f"PeerRank: {ranking.peerrank.iterations} iterations (baseline agrees to {worst:.1e})",
        file=sys.stderr,
    )
    summary = {
        "reviews": frame.height,
        "seconds": round(seconds, 4),
        "baseline_seconds": round(baseline_seconds, 3),
        "speedup": round(baseline_seconds / seconds, 1),
        "shuffled_seconds": round(shuffled_seconds, 4),
        "shuffled_speedup": round(baseline_seconds / shuffled_seconds, 1),
        "elo_seconds": None if elo_seconds is None else round(elo_seconds, 2),
        "leaderboard_seconds": round(leaderboard_seconds, 2),
        # CPU seconds over all threads: what the figures above cost on an otherwise idle
        # machine is about these divided by the cores used (Elo runs on every core).
        "elo_cpu_seconds": None if elo_cpu is None else round(elo_cpu, 2),
        "leaderboard_cpu_seconds": round(leaderboard_cpu, 2),
        "leaderboard_style_seconds": round(style_seconds, 2),
        "leaderboard_style_cpu_seconds": round(style_cpu, 2),
        "cores": len(os.sched_getaffinity(0)),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
