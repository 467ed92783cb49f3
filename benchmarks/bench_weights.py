"""Reviewer weights on adversarial designs: do the weights follow how well each judge judges?

Simulated tournaments run through `arena run`'s real pipeline (the simulator,
scheduler, crash-safe log), each on designs built to fool PeerRank: the best
contestants are the noisiest judges, and some judges prefer their own answers
or the answer shown first. Every run is ranked three times, with
`--weights equal`, `peerrank` and `reliability`, and measured against the
simulator's truth:

- `spearman`: Spearman's rho between each reviewer's weight and minus its
  `judge_noise` (1: the weights order the judges by how well they judge);
- `tau`: Kendall's tau-b between the Bradley-Terry ratings and the true skills.

Per design, the mean over seeds, and the paired differences reliability -
equal and reliability - peerrank in tau with a 95% percentile bootstrap
interval over the seeds. With `--prd DIR` (a checkout of the PRD paper's
repository, github.com/bcdnlp/PRD, or its bare git directory) it also ranks
the paper's 8,000 Vicuna80 reviews with each weighting, with and without
self-reviews, and checks the human order (gpt-4 > claude > vicuna > gpt-3.5 >
bard). The PRD data are read, never copied.

Prints one line per run, then a final JSON line:
{"designs": {name: {"runs", "spearman": {weighting: mean}, "tau": {weighting:
 mean}, "tau_minus_equal": [mean, lo, hi], "tau_minus_peerrank": [mean, lo, hi],
 "min_spearman_reliability"}}, "overall": {...same over every run...},
 "prd": {...} or null, "seconds"}

Usage: python benchmarks/bench_weights.py [--seeds N] [--questions N] [--prd DIR] [--smoke]
`--smoke`: 2 seeds of 6 questions per design, a check that every weighting
still runs (no figure); with `--prd DIR` the PRD part runs in full.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

from arena.config import load_tournament
from arena.engine import run_tournament
from arena.rank import rank_correlation
from arena.report import LeaderboardOptions, build_leaderboard, rank_frame

WEIGHTINGS = ("equal", "peerrank", "reliability")
# name -> model -> (skill, judge_noise, self_preference, position_bias). The
# designs were written before the reliability model was run on any of them.
Design = dict[str, tuple[float, float, float, float]]
DESIGNS: dict[str, Design] = {
    # The two best contestants judge worst; one self-preferring, one position-biased judge.
    "noisy-top": {
        "atlas": (1.5, 3.0, 0.0, 0.0),
        "boreal": (1.0, 2.5, 0.0, 0.0),
        "cirrus": (0.5, 0.3, 1.5, 0.0),
        "dune": (0.0, 0.6, 0.0, 0.8),
        "ember": (-0.5, 0.9, 0.0, 0.0),
        "fjord": (-1.0, 1.2, 0.0, 0.0),
    },
    # Judging skill exactly inverse to answering skill; the two best prefer themselves.
    "inverted": {
        "atlas": (1.5, 2.4, 1.0, 0.0),
        "boreal": (1.0, 2.05, 1.0, 0.0),
        "cirrus": (0.5, 1.7, 0.0, 0.0),
        "dune": (0.0, 1.35, 0.0, 0.0),
        "ember": (-0.5, 1.0, 0.0, -0.6),
        "fjord": (-1.0, 0.65, 0.0, 0.0),
        "gale": (-1.5, 0.3, 0.0, 0.0),
    },
    # Eight models, noise unrelated to rank but worst at the top; mixed biases.
    "mixed": {
        "atlas": (1.4, 3.0, 0.8, 0.0),
        "boreal": (1.0, 2.0, 0.0, 0.0),
        "cirrus": (0.7, 0.4, 2.0, 0.0),
        "dune": (0.4, 1.0, 0.0, 1.0),
        "ember": (0.1, 0.5, 0.0, 0.0),
        "fjord": (-0.3, 0.7, 0.0, -0.8),
        "gale": (-0.7, 0.3, 0.0, 0.0),
        "haze": (-1.2, 1.5, 0.0, 0.0),
    },
    # The most accurate judges are also the most biased ones.
    "biased-accurate": {
        "atlas": (1.2, 2.5, 0.0, 0.0),
        "boreal": (0.8, 2.0, 0.0, 0.0),
        "cirrus": (0.4, 1.5, 0.0, 0.0),
        "dune": (0.0, 0.2, 0.0, 1.2),
        "ember": (-0.4, 0.35, 1.5, 0.0),
        "fjord": (-0.8, 0.5, 1.0, 0.0),
    },
}
HUMAN_ORDER = ["gpt-4", "claude", "vicuna", "gpt-3.5", "bard"]


def write_tournament(folder: Path, design: Design, seed: int, questions: int) -> Path:
    """One design's tournament YAML and questions file in `folder`."""
    lines = [
        json.dumps({"id": f"q{i}", "text": f"Weights question {i}?"}) for i in range(questions)
    ]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    config: dict[str, Any] = {
        "name": "bench-weights",
        "seed": seed,
        "questions": "questions.jsonl",
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": {
            name: {
                "provider": "sim",
                "sim": {
                    "skill": skill,
                    "judge_noise": noise,
                    "self_preference": self_pref,
                    "position_bias": position,
                },
            }
            for name, (skill, noise, self_pref, position) in design.items()
        },
        "contestants": list(design),
    }
    path = folder / "tournament.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def measure_run(folder: Path, design: Design) -> dict[str, dict[str, float]]:
    """Spearman(weight, -noise) and Kendall tau of BT for each weighting, on one run."""
    out: dict[str, dict[str, float]] = {"spearman": {}, "tau": {}}
    for weighting in WEIGHTINGS:
        board = build_leaderboard(
            folder, options=LeaderboardOptions(weights=weighting, bootstrap=0, elo_orders=0)
        )
        reviewers = board.ranking.reviews.reviewers
        weights = board.ranking.peerrank.weights
        noise = np.array([-design[name][1] for name in reviewers])
        out["spearman"][weighting] = float(rank_correlation(weights, noise).spearman)
        assert board.kendall_tau is not None
        out["tau"][weighting] = float(board.kendall_tau["bt"])
    return out


def paired(values: list[float], seed: int = 0) -> list[float]:
    """Mean and 95% percentile bootstrap interval (over runs) of paired differences."""
    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(4000, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return [round(float(data.mean()), 4), round(float(low), 4), round(float(high), 4)]


def _mean(values: list[float]) -> float | None:
    """Rounded mean; None (JSON null) where undefined (equal weights have no Spearman)."""
    mean = float(np.mean(values))
    return None if np.isnan(mean) else round(mean, 4)


def summarise(runs: list[dict[str, dict[str, float]]]) -> dict[str, Any]:
    """Means per weighting and paired tau differences over a list of runs."""
    rel = [r["tau"]["reliability"] for r in runs]
    return {
        "runs": len(runs),
        "spearman": {w: _mean([r["spearman"][w] for r in runs]) for w in WEIGHTINGS},
        "tau": {w: _mean([r["tau"][w] for r in runs]) for w in WEIGHTINGS},
        "tau_minus_equal": paired([x - r["tau"]["equal"] for x, r in zip(rel, runs, strict=True)]),
        "tau_minus_peerrank": paired(
            [x - r["tau"]["peerrank"] for x, r in zip(rel, runs, strict=True)]
        ),
        "min_spearman_reliability": round(
            float(min(r["spearman"]["reliability"] for r in runs)), 4
        ),
    }


def sim_designs(
    designs: dict[str, Design], seeds: list[int], questions: int, keep: Path | None
) -> dict[str, Any]:
    """Run every design at every seed and summarise."""
    results: dict[str, list[dict[str, dict[str, float]]]] = {}
    for name, design in designs.items():
        for seed in seeds:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp) if keep is None else keep / f"{name}-{seed}"
                folder.mkdir(parents=True, exist_ok=True)
                tournament = load_tournament(write_tournament(folder, design, seed, questions))
                if not (tournament.output_dir / "last_run.json").exists():
                    asyncio.run(run_tournament(tournament))
                run = measure_run(tournament.output_dir, design)
            results.setdefault(name, []).append(run)
            print(
                f"{name:16s} seed {seed:3d}  spearman "
                + " ".join(f"{w}={run['spearman'][w]:+.2f}" for w in WEIGHTINGS)
                + "  tau "
                + " ".join(f"{w}={run['tau'][w]:+.2f}" for w in WEIGHTINGS),
                flush=True,
            )
    every = [run for runs in results.values() for run in runs]
    return {
        "designs": {name: summarise(runs) for name, runs in results.items()},
        "overall": summarise(every),
    }


# PRD's score convention in its review files: 1 = first answer, 2 = second, 3 = tie
# (-1: no verdict, which the paper's code counts as a tie).
_PRD_SCORE = {-1: 0, 1: -1, 2: 1, 3: 0}
_VERDICT = {-1: "A", 0: "tie", 1: "B"}
_PRD_MODELS = {
    "gpt4": "gpt-4",
    "gpt35": "gpt-3.5",
    "bard": "bard",
    "claude": "claude",
    "vicuna-13b": "vicuna",
}


def _prd_files(root: Path) -> tuple[list[str], Any]:
    """Paths under data/vicuna80 and a reader, for a checkout or a bare git directory."""
    if (root / "data" / "vicuna80").is_dir():
        paths = [str(p.relative_to(root)) for p in (root / "data" / "vicuna80").rglob("*.jsonl")]
        return paths, lambda path: (root / path).read_text()
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "HEAD", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), "show", f"HEAD:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    return [p for p in listing if p.startswith("data/vicuna80/")], show


def prd_reviews(root: Path) -> pl.DataFrame:
    """PRD's peer reviews (5 reviewers x 20 ordered pairs x 80 questions) as a reviews frame."""
    paths, read = _prd_files(root)
    rows: list[dict[str, Any]] = []
    for a in _PRD_MODELS:
        for b in _PRD_MODELS:
            for reviewer, name in _PRD_MODELS.items():
                prefix = f"answer_{a}-vs-answer_{b}-{reviewer}-reviewer"
                found = [
                    p for p in paths if "/ratings-" in p and p.split("/")[-1].startswith(prefix)
                ]
                if a == b or not found:
                    continue
                for line in read(sorted(found)[0]).splitlines():
                    if line.strip():
                        record = json.loads(line)
                        rows.append(
                            {
                                "question_id": str(record["question_id"]),
                                "model_a": _PRD_MODELS[a],
                                "model_b": _PRD_MODELS[b],
                                "reviewer": name,
                                "verdict": _VERDICT[_PRD_SCORE[int(record["score"])]],
                            }
                        )
    return pl.DataFrame(rows)


def prd(root: Path) -> dict[str, Any]:
    """The BT order and reviewer weights of PRD's reviews under each weighting."""
    reviews = prd_reviews(root)
    out: dict[str, Any] = {"reviews": reviews.height}
    for exclude_self in (False, True):
        key = "without_self" if exclude_self else "with_self"
        block: dict[str, Any] = {}
        for weighting in WEIGHTINGS:
            options = LeaderboardOptions(
                weights=weighting, bootstrap=0, elo_orders=0, exclude_self=exclude_self
            )
            board = rank_frame(reviews, source="prd", options=options)
            names = board.contestants
            bt = board.ranking.bt.rating
            order = [names[i] for i in np.argsort(-bt)]
            block[weighting] = {
                "order": order,
                "human_order": order == HUMAN_ORDER,
                "bt": {names[i]: round(float(bt[i]), 1) for i in range(len(names))},
                "weights": {
                    n: round(float(w), 3)
                    for n, w in zip(
                        board.ranking.reviews.reviewers, board.ranking.peerrank.weights, strict=True
                    )
                },
            }
        out[key] = block
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="seeds per design (1..N)")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--prd", type=Path, default=None, help="PRD checkout or git directory")
    parser.add_argument("--keep", type=Path, default=None, help="keep (and reuse) runs in DIR")
    parser.add_argument("--smoke", action="store_true", help="a small size: a check, no figure")
    args = parser.parse_args()
    if args.smoke:
        args.seeds, args.questions = 2, 6
    started = time.perf_counter()
    summary: dict[str, Any] = {}
    if args.seeds > 0:
        summary = sim_designs(DESIGNS, list(range(1, args.seeds + 1)), args.questions, args.keep)
    summary["prd"] = None if args.prd is None else prd(args.prd)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
