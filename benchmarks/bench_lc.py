"""AlpacaEval 2.0's length-controlled win rate, each model alone, checked out of sample.

The files are not in this repository. Lay them out under --data:

    DATA/ae/results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json
    DATA/ae/leaderboard.csv   AlpacaEval 2.0's published leaderboard

Measures, against the published LC (points):
- no table: each model's file alone (difficulties 0, the default slope prior);
- with a table: repeated random 2-fold splits of the models; the difficulty
  table is fitted on one half (the reference) and each model of the other
  half is fitted alone with it;
- the choice of the constants, out of sample: on each split the slope prior's
  width (with a table) and centre and width (without) are chosen on one half
  (least mean |LC - published|) and the choice is scored on the other half;
- the same with the slope shrunk toward zero (the width chosen likewise);
- the move of a model's LC when all the others are added (same table).
Each as mean +- sd over the held-out halves. --smoke: 8 models, 2 splits.

Usage: python benchmarks/bench_lc.py [--data /tmp/trust] [--splits 10] [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arena.rank import (
    DEFAULT_PRIOR_MEAN,
    DEFAULT_PRIOR_SD,
    TABLE_PRIOR_SD,
    DifficultyTable,
    encode_reviews,
    length_controlled_win_rates,
    reference_difficulty,
)
from arena.report import load_reviews_file

BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
TABLE_WIDTHS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1.0)
ZERO_WIDTHS = (0.1, 0.2, 0.25, 0.3, 0.35, 0.5, 1.0, 2.0)
DEFAULT_GRID = tuple(
    (round(mean, 2), sd) for mean in np.arange(0.6, 1.45, 0.1) for sd in (0.05, 0.1, 0.15, 0.2)
)


def _published(path: Path) -> dict[str, float]:
    with path.open(newline="") as handle:
        return {
            row[""]: float(row["length_controlled_winrate"])
            for row in csv.DictReader(handle)
            if row["length_controlled_winrate"]
        }


def _lc(
    frame: pl.DataFrame,
    table: DifficultyTable | None = None,
    prior: tuple[float, float] | None = None,
) -> float:
    rs = encode_reviews(frame)
    rates = length_controlled_win_rates(
        rs, BASELINE, bootstrap=0, difficulty=table, length_prior=prior
    ).rates
    return 100 * rates[0].lc_win_rate


def _metrics(lc: dict[str, float], published: dict[str, float]) -> dict[str, float]:
    diffs = [abs(lc[m] - published[m]) for m in lc]
    return {
        "mean_abs_diff": sum(diffs) / len(diffs),
        "within_2": sum(d <= 2 for d in diffs) / len(diffs),
        "worst": max(diffs),
    }


def _summary(runs: list[dict[str, float]]) -> dict[str, str]:
    out = {}
    for key in runs[0]:
        values = [r[key] for r in runs]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        out[key] = f"{statistics.mean(values):.3f} +- {sd:.3f}"
    out["worst_of_all"] = f"{max(r['worst'] for r in runs):.2f}"
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path("/tmp/trust"))
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    root = args.data / "ae"
    if not (root / "leaderboard.csv").is_file():
        print(f"skipped: {root / 'leaderboard.csv'} is absent", file=sys.stderr)
        return {}
    published = _published(root / "leaderboard.csv")
    files = {
        m: root / "results" / m / ANNOTATOR / "annotations.json" for m in published if m != BASELINE
    }
    files = {m: p for m, p in files.items() if p.is_file() and p.stat().st_size > 10}
    models = sorted(files)[:8] if args.smoke else sorted(files)
    splits = 2 if args.smoke else args.splits
    frames = {m: load_reviews_file(files[m]) for m in models}

    alone = {m: _lc(frames[m]) for m in models}
    grid_alone = {g: {m: _lc(frames[m], prior=g) for m in models} for g in DEFAULT_GRID}
    zero_alone = {sd: {m: _lc(frames[m], prior=(0.0, sd)) for m in models} for sd in ZERO_WIDTHS}
    rng = np.random.default_rng(0)
    table_runs, chosen_table_runs, chosen_default_runs, moves = [], [], [], []
    zero_table_runs, zero_alone_runs = [], []
    chosen_widths: list[float] = []
    chosen_defaults: list[tuple[float, float]] = []
    for _ in range(splits):
        order = [models[i] for i in rng.permutation(len(models))]
        half = len(order) // 2
        for ref, held in ((order[:half], order[half:]), (order[half:], order[:half])):
            table = reference_difficulty(
                encode_reviews(pl.concat([frames[m] for m in ref], how="diagonal_relaxed")),
                BASELINE,
            )
            with_table = {m: _lc(frames[m], table) for m in held}
            table_runs.append(_metrics(with_table, published))
            # The width chosen on the reference half (its own table), scored on the other.
            width = min(
                TABLE_WIDTHS,
                key=lambda sd, ref=ref, table=table: _metrics(
                    {m: _lc(frames[m], table, (table.length_coef, sd)) for m in ref}, published
                )["mean_abs_diff"],
            )
            chosen_widths.append(width)
            chosen_table_runs.append(
                _metrics(
                    {m: _lc(frames[m], table, (table.length_coef, width)) for m in held},
                    published,
                )
            )
            best = min(
                DEFAULT_GRID,
                key=lambda g, ref=ref: _metrics({m: grid_alone[g][m] for m in ref}, published)[
                    "mean_abs_diff"
                ],
            )
            chosen_defaults.append(best)
            chosen_default_runs.append(_metrics({m: grid_alone[best][m] for m in held}, published))
            # Toward zero instead: the width chosen on the reference half, with and without
            # the table.
            zero = min(
                ZERO_WIDTHS,
                key=lambda sd, ref=ref: _metrics({m: zero_alone[sd][m] for m in ref}, published)[
                    "mean_abs_diff"
                ],
            )
            zero_alone_runs.append(_metrics({m: zero_alone[zero][m] for m in held}, published))
            zero = min(
                ZERO_WIDTHS,
                key=lambda sd, ref=ref, table=table: _metrics(
                    {m: _lc(frames[m], table, (0.0, sd)) for m in ref}, published
                )["mean_abs_diff"],
            )
            zero_table_runs.append(
                _metrics({m: _lc(frames[m], table, (0.0, zero)) for m in held}, published)
            )
            # All the held-out models at once, same table: each one's figure must not move.
            together = length_controlled_win_rates(
                encode_reviews(pl.concat([frames[m] for m in held], how="diagonal_relaxed")),
                BASELINE,
                bootstrap=0,
                difficulty=table,
            )
            by_name = {r.model: 100 * r.lc_win_rate for r in together.rates}
            names = {m: encode_reviews(frames[m]).contestants for m in held}
            for m in held:
                (own,) = (n for n in names[m] if n != BASELINE)
                moves.append(abs(by_name[own] - with_table[m]))
    out = {
        "models": len(models),
        "splits": splits,
        "constants": {
            "TABLE_PRIOR_SD": TABLE_PRIOR_SD,
            "DEFAULT_PRIOR_MEAN": DEFAULT_PRIOR_MEAN,
            "DEFAULT_PRIOR_SD": DEFAULT_PRIOR_SD,
        },
        "no_table_alone_fixed_constants": _metrics(alone, published),
        "no_table_constants_chosen_on_half_held_out": _summary(chosen_default_runs),
        "no_table_choices": [list(c) for c in chosen_defaults],
        "table_from_other_half_fixed_width": _summary(table_runs),
        "table_width_chosen_on_half_held_out": _summary(chosen_table_runs),
        "table_width_choices": chosen_widths,
        "toward_zero_no_table_width_chosen_on_half_held_out": _summary(zero_alone_runs),
        "toward_zero_table_width_chosen_on_half_held_out": _summary(zero_table_runs),
        "max_move_when_others_added": round(max(moves), 9),
        "per_model_no_table": {m: [round(alone[m], 2), round(published[m], 2)] for m in models},
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
