"""Sampled tournaments against the full one: how much of the ranking a budget buys.

For each seed, a simulated tournament of 12 contestants that all review, close
in skill (0.12 apart, answer noise 0.8) with noisy and biased reviewers (judge
noise 0.4-1.6, position bias, self-preference), is run three ways through
`arena run` in a temporary directory: the full design, `uniform` and
`adaptive` at each budget. Each run's leaderboard (`arena.report`, as
`arena leaderboard` computes it) is compared with the full run's
Bradley-Terry order and with the true (simulated) skill order.

Prints one line per run, then one JSON line: per strategy and budget, the
share of review calls used, Kendall tau vs the full order and vs the truth,
and the mean width of the 95% BT intervals, averaged over the seeds.

    python benchmarks/bench_sampling.py [--seeds 5] [--questions 60] [--first-seed 0]
                                        [--budgets 0.1 0.3]

The simulator's answers and verdicts depend only on the call (its prompt and
the seed), so a sampled run's reviews are exactly the full run's reviews of the
same calls: the comparison measures the design alone.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from scipy.stats import kendalltau

from arena.config import load_tournament
from arena.report import build_leaderboard, leaderboard_dict

N_MODELS = 12
GAP = 0.12
ANSWER_NOISE = 0.8
BUDGETS = (0.1, 0.3)


def write_tournament(root: Path, seed: int, questions: int, sampling: dict[str, Any]) -> Path:
    rng = random.Random(seed)
    models = {}
    names = [f"model{i:02d}" for i in range(N_MODELS)]
    for i, name in enumerate(names):
        models[name] = {
            "provider": "sim",
            "sim": {
                "skill": round(GAP * (N_MODELS - 1 - i), 4),
                "answer_noise": ANSWER_NOISE,
                "judge_noise": round(rng.uniform(0.4, 1.6), 3),
                "position_bias": round(rng.gauss(0.0, 0.3), 3),
                "self_preference": round(rng.uniform(0.0, 0.6), 3),
            },
        }
    qfile = root / "questions.jsonl"
    if not qfile.exists():
        with qfile.open("w") as f:
            for k in range(questions):
                f.write(json.dumps({"id": f"q{k:03d}", "turns": [f"Benchmark question {k}?"]}))
                f.write("\n")
    tag = sampling.get("strategy", "full") + str(sampling.get("budget", ""))
    cfg = {
        "name": f"bench-{seed}-{tag}",
        "seed": seed,
        "questions": "questions.jsonl",
        "output": str(root / "runs" / f"{seed}-{tag}"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": models,
        "contestants": names,
        "sampling": sampling,
    }
    path = root / f"t-{seed}-{tag}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def run(path: Path) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"arena run {path} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def board(path: Path) -> dict[str, Any]:
    t = load_tournament(path)
    return leaderboard_dict(build_leaderboard(t.output_dir))


def order_tau(a: dict[str, float], b: dict[str, float]) -> float:
    names = sorted(a)
    return float(kendalltau([a[n] for n in names], [b[n] for n in names]).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budgets", type=float, nargs="+", default=list(BUDGETS))
    parser.add_argument("--rounds", type=int, default=5, help="adaptive: rounds after the seed")
    parser.add_argument("--seed-share", type=float, default=0.3, help="adaptive: seed round share")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            full_path = write_tournament(root, seed, args.questions, {"strategy": "full"})
            full_summary, wall = run(full_path)
            full = board(full_path)
            full_bt = {m["model"]: m["bt"] for m in full["models"]}
            truth = {
                m["model"]: -i
                for i, m in enumerate(sorted(full["models"], key=lambda m: m["model"]))
            }
            full_calls = full_summary["by_stage"]["reviews"]["completed"]
            row = {
                "share": 1.0,
                "tau_full": 1.0,
                "tau_true": order_tau(full_bt, truth),
                "ci_width": _width(full),
            }
            results.setdefault("full", []).append(row)
            print(f"seed {seed} full: {full_calls} review calls, {wall:.1f}s, {row}", flush=True)
            for budget in args.budgets:
                for strategy in ("uniform", "adaptive"):
                    sampling: dict[str, Any] = {"strategy": strategy, "budget": budget}
                    if strategy == "adaptive":
                        sampling.update(rounds=args.rounds, seed_share=args.seed_share)
                    path = write_tournament(root, seed, args.questions, sampling)
                    summary, wall = run(path)
                    lb = board(path)
                    bt = {m["model"]: m["bt"] for m in lb["models"]}
                    calls = summary["sampling"]["judged_review_calls"]
                    row = {
                        "share": calls / full_calls,
                        "tau_full": order_tau(bt, full_bt),
                        "tau_true": order_tau(bt, truth),
                        "ci_width": _width(lb),
                    }
                    results.setdefault(f"{strategy}@{budget}", []).append(row)
                    print(
                        f"seed {seed} {strategy}@{budget}: {calls} calls, {wall:.1f}s, {row}",
                        flush=True,
                    )
    summary_out = {
        "models": N_MODELS,
        "questions": args.questions,
        "seeds": args.seeds,
        "results": {
            key: {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]}
            | {"tau_full_min": round(min(r["tau_full"] for r in rows), 4)}
            for key, rows in results.items()
        },
    }
    print(json.dumps(summary_out))


def _width(lb: dict[str, Any]) -> float:
    widths = [m["bt_ci_high"] - m["bt_ci_low"] for m in lb["models"]]
    return sum(widths) / len(widths)


if __name__ == "__main__":
    main()
