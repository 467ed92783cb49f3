"""Style control on the simulator: does it undo the judges' preference for long answers?

A sim tournament of six models with known skills runs through `arena run`'s
real pipeline (scheduler, crash-safe log). One weak model, "ember", is
verbose: its answers are four times as long as the others' (every model's
length also varies by answer, log-sd 0.35). Every reviewer has a
`length_bias`: the longer answer gets a bonus in the perceived quality gap
proportional to the relative length difference. The leaderboard is then built
from the run directory, which reads the answers' text from the log; it
reports the raw Bradley-Terry ranking and the style-controlled one (length
and markdown covariates fitted jointly with the ratings and reviewer weights).

This is a plumbing check: the length bias is built into the simulator, so it
shows that style control recovers a known truth through the whole pipeline,
not how much real judges are swayed by length.

Prints a few lines, then a final JSON line:
{"questions", "reviews", "tau_raw", "tau_controlled", "verbose_rank_raw",
 "verbose_rank_controlled", "true_verbose_rank", "length_coef", "length_coef_ci",
 "length_bias_mean", "seconds"}
Targets: tau_controlled >= 0.9 and tau_controlled > tau_raw.

Usage: python benchmarks/bench_style.py [--questions N] [--keep DIR] [--smoke]
--smoke: 8 questions (the plumbing only; the targets need the full size).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from arena.config import load_tournament
from arena.engine import run_tournament
from arena.report import LeaderboardOptions, build_leaderboard

SEED = 11
VERBOSE = "ember"
# name: (skill, answer_words)
MODELS: dict[str, tuple[float, int]] = {
    "atlas": (1.5, 60),
    "boreal": (1.0, 60),
    "cirrus": (0.5, 60),
    "dune": (0.0, 60),
    VERBOSE: (-0.5, 240),
    "fjord": (-1.0, 60),
}
LENGTH_BIAS = 1.2
SPREAD = 0.35


def write_tournament(folder: Path, questions: int) -> Path:
    """The benchmark tournament's YAML and questions file."""
    lines = [json.dumps({"id": f"q{i}", "text": f"Style question {i}?"}) for i in range(questions)]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    config: dict[str, Any] = {
        "name": "bench-style",
        "seed": SEED,
        "questions": "questions.jsonl",
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": {
            name: {
                "provider": "sim",
                "sim": {
                    "skill": skill,
                    "answer_words": words,
                    "answer_words_spread": SPREAD,
                    "length_bias": LENGTH_BIAS,
                    "judge_noise": 0.5,
                },
            }
            for name, (skill, words) in MODELS.items()
        },
        "contestants": list(MODELS),
    }
    path = folder / "tournament.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run(questions: int, folder: Path) -> dict[str, Any]:
    """Run the tournament in `folder` and measure both rankings against the truth."""
    started = time.perf_counter()
    tournament = load_tournament(write_tournament(folder, questions))
    asyncio.run(run_tournament(tournament))
    board = build_leaderboard(
        tournament.output_dir, options=LeaderboardOptions(elo_orders=0, bootstrap=200, seed=0)
    )
    ranking = board.ranking
    style = ranking.style
    if style is None or ranking.style_ranks is None or board.kendall_tau is None:
        raise SystemExit(f"style control unavailable: {ranking.style_note}")
    names = list(board.contestants)
    verbose = names.index(VERBOSE)
    length = style.features.index("length")
    bias = ranking.length_bias
    true_rank = 1 + sorted(MODELS, key=lambda m: -MODELS[m][0]).index(VERBOSE)
    print("model         raw BT  rank | controlled  rank")
    for i in ranking.ranks.order:
        print(
            f"{names[i]:<12} {ranking.bt.rating[i]:7.0f} {ranking.ranks.rank[i]:5d} | "
            f"{style.rating[i]:10.0f} {ranking.style_ranks.rank[i]:5d}"
        )
    print(
        f"length coefficient {style.coef[length]:+.3f} "
        f"({style.coef_low[length]:+.3f} to {style.coef_high[length]:+.3f}) log-odds per unit"
    )
    return {
        "questions": questions,
        "reviews": ranking.reviews.n_rows,
        "tau_raw": round(float(board.kendall_tau["bt"]), 4),
        "tau_controlled": round(float(board.kendall_tau["bt_style"]), 4),
        "verbose_rank_raw": int(ranking.ranks.rank[verbose]),
        "verbose_rank_controlled": int(ranking.style_ranks.rank[verbose]),
        "true_verbose_rank": true_rank,
        "length_coef": round(float(style.coef[length]), 4),
        "length_coef_ci": [
            round(float(style.coef_low[length]), 4),
            round(float(style.coef_high[length]), 4),
        ],
        "length_bias_mean": None if bias is None else round(float(np.nanmean(bias)), 4),
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--keep", type=Path, default=None, help="run in DIR and keep it")
    parser.add_argument("--smoke", action="store_true", help="8 questions")
    args = parser.parse_args()
    if args.smoke:
        args.questions = 8
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        summary = run(args.questions, args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            summary = run(args.questions, Path(tmp))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
