"""The anchors' real files through arena's defaults: self-judged MT-bench, PRD's folders as
shipped, AlpacaEval 2.0's length-controlled win rate one model at a time.

The files are not in this repository. Lay them out under --data (each part is
skipped, with a message, when its files are absent):

    DATA/fastchat/gpt-4_pair.jsonl     FastChat's skycamp MT-bench pairwise judgments
                                       (fastchat/llm_judge/data/skycamp/model_judgment/)
    DATA/prd/data/vicuna80/ratings-*   PRD's review folders as its repository ships them
    DATA/ae/results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json
    DATA/ae/leaderboard.csv            AlpacaEval 2.0's published leaderboard
                                       (weighted_alpaca_eval_gpt4_turbo_leaderboard.csv)

Prints one JSON line: for MT-bench every model's rank and BT and the
warnings; for PRD the reviews counted, the repeats warning, each judge's
Table 5 accuracy / kappa and Table 3's human column; for AlpacaEval each
model's LC alone, LC among all, the published LC, the mean absolute
difference, the share within 2 points and the largest move when all others
are added. --smoke: the first 6
AlpacaEval models only.

Usage: python benchmarks/bench_anchors.py [--data /tmp/trust] [--smoke]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from arena.rank import encode_reviews, length_controlled_win_rates
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict, load_reviews_file

BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
FAST = LeaderboardOptions(elo_orders=0, bootstrap=0)


def mt_bench(data: Path) -> dict[str, Any]:
    """FastChat's skycamp pairwise file: gpt-4 judges and competes."""
    path = data / "fastchat" / "gpt-4_pair.jsonl"
    if not path.is_file():
        return {"skipped": f"{path} is absent"}
    board = leaderboard_dict(build_leaderboard(reviews_file=[path], options=FAST))
    return {
        "models": {m["model"]: {"rank": m["rank"], "bt": m["bt"]} for m in board["models"]},
        "warnings": board.get("warnings", []),
    }


def prd(data: Path) -> dict[str, Any]:
    """PRD's five reviewer folders as shipped, Table 5's command."""
    root = data / "prd" / "data" / "vicuna80"
    folders = [root / f"ratings-{r}" for r in ("bard", "claude", "gpt35", "gpt4", "vicuna-13b")]
    if not all(f.is_dir() for f in folders):
        return {"skipped": f"{root}/ratings-* are absent"}
    options = LeaderboardOptions(
        elo_orders=0,
        bootstrap=0,
        weights="peerrank",
        human_merge="mean-sign",
        majority="ordered-mean",
        kappa_categories="position",
    )
    board = leaderboard_dict(
        build_leaderboard(reviews_file=folders, human_file=root / "ratings-human", options=options)
    )
    agreement = board["agreement"]
    return {
        "reviews": board["counts"]["reviews"],
        "warnings": board.get("warnings", []),
        "table5": {
            r["reviewer"]: [r["accuracy"], round(r["kappa"], 6)] for r in agreement["reviewers"]
        },
        # Table 3's human column: each ordered battle's labels merged (PRD's convention).
        "table3_human": {m: round(v, 6) for m, v in agreement["human_win_rate"].items()},
    }


def _published(path: Path) -> dict[str, float]:
    with path.open(newline="") as handle:
        return {
            row[""]: float(row["length_controlled_winrate"])
            for row in csv.DictReader(handle)
            if row["length_controlled_winrate"]
        }


def alpacaeval(data: Path, smoke: bool) -> dict[str, Any]:
    """Each model's LC alone and among all, against the published figure (points)."""
    root = data / "ae"
    table = root / "leaderboard.csv"
    if not table.is_file():
        return {"skipped": f"{table} is absent"}
    published = _published(table)
    files = {}
    for model in published:
        path = root / "results" / model / ANNOTATOR / "annotations.json"
        if model != BASELINE and path.is_file() and path.stat().st_size > 10:
            files[model] = path
    models = sorted(files)[:6] if smoke else sorted(files)
    alone: dict[str, float] = {}
    generator: dict[str, str] = {}  # a results folder's name: its generator's (NullModel: example)
    for model in models:
        rs = encode_reviews(load_reviews_file(files[model]))
        (rate,) = length_controlled_win_rates(rs, BASELINE, bootstrap=0).rates
        alone[model], generator[model] = 100 * rate.lc_win_rate, rate.model
    rs = encode_reviews(load_reviews_file([files[m] for m in models]))
    together = {
        r.model: 100 * r.lc_win_rate
        for r in length_controlled_win_rates(rs, BASELINE, bootstrap=0).rates
    }
    diffs = [abs(alone[m] - published[m]) for m in models]
    moves = [abs(alone[m] - together[generator[m]]) for m in models]
    return {
        "models": len(models),
        "mean_abs_diff_alone": round(sum(diffs) / len(diffs), 3),
        "share_within_2_points": round(sum(d <= 2 for d in diffs) / len(diffs), 3),
        "max_abs_diff": round(max(diffs), 3),
        "max_move_when_all_added": round(max(moves), 6),
        "per_model": {
            m: {
                "alone": round(alone[m], 2),
                "together": round(together[generator[m]], 2),
                "published": round(published[m], 2),
            }
            for m in models
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path("/tmp/trust"))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    out = {
        "mt_bench": mt_bench(args.data),
        "prd": prd(args.data),
        "alpacaeval": alpacaeval(args.data, args.smoke),
    }
    for name, part in out.items():
        if "skipped" in part:
            print(f"{name}: skipped ({part['skipped']})", file=sys.stderr)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
