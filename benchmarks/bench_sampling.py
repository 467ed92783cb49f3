"""Sampled tournaments against the full one: does `adaptive` beat `uniform`, design by design?

For each design and seed, a simulated peer tournament (every contestant
reviews) is judged in full, then sampled with `uniform` and with `adaptive`
at each budget. Each sample is ranked as `arena leaderboard` ranks a sampled
run (PeerRank weights with balanced win rates, weighted Bradley-Terry) and
compared by Kendall tau with the full run's Bradley-Terry order and with the
true (simulated) skill order. The JSON line at the end holds, per design and
budget: the mean tau of each strategy, the paired difference adaptive minus
uniform (mean, 95% t-interval over seeds) and its wins, losses and ties.

Two engines:

- `replica` (default): the simulator's review model restated in numpy (an
  answer's quality is skill plus `answer_noise` x N(0,1) per question; a
  review sees the quality gap plus the reviewer's position bias, its
  self-preference when it wrote one of the answers, and `judge_noise` x
  N(0,1), and calls a tie inside a band of 0.1 - as `arena/providers/sim.py`
  does). Every unit's two verdicts are drawn once, so a sample's verdicts are
  exactly the full run's for the same calls. The designs are chosen by
  `arena.sampling.select_round`, the function `arena run` calls, round after
  round with the planner's seeds; the ranking is `arena.rank`'s. Fast enough
  for many designs and seeds (`--workers` processes).
- `arena`: every run through `arena run` and `arena leaderboard` in a
  temporary directory (the default hard design only: 12 close models with
  noisy, biased reviewers); slow (about a minute per full run).

    python benchmarks/bench_sampling.py [--designs NAME ...] [--seeds 10] [--first-seed 1000]
                                        [--budgets 0.1 0.3] [--workers 4] [--engine replica]

`--designs tuning` runs the designs the rule's constants were chosen on;
the default set (`report`) is disjoint from them, and its seeds start at
1000 (tuning used seeds below 100).

`--align` (replica engine) compares `adaptive` with `adaptive` under
`align: cache` instead of `uniform` with `adaptive`: the same tau columns,
the paired difference aligned minus plain, and per strategy
`shared_prefix`: the share of review calls whose prefix (question,
reviewer, first answer) an earlier review of the same round already showed
(what a prompt cache could serve, rounds being a batch job apart).

`--per-dollar` (replica engine) compares `adaptive` with `adaptive` under
`reviewers: per_dollar`, each model's review priced as real lineups are:
log-evenly from 1 (the weakest) to 50 (the strongest), so the dear judges
are the strong ones, whatever their judging is like in the design. Besides
the tau columns, per strategy `cost`: the sample's review cost over a
uniform design's of the same size (each unit's reviewer's price).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml
from numpy.typing import NDArray
from scipy import stats

from arena.config import SamplingConfig, load_tournament
from arena.rank import encode_reviews, fit_bradley_terry, pair_matrix, peerrank, tally_reviews
from arena.report import build_leaderboard, leaderboard_dict
from arena.sampling import Grid, sampling_budget, select_round

BUDGETS = (0.1, 0.3)
TIE_BAND = 0.1


@dataclass(frozen=True)
class Design:
    """A simulated tournament: contestants (all reviewing) and the question count."""

    name: str
    skill: tuple[float, ...]
    answer_noise: float
    judge_noise: tuple[float, ...]
    position_bias: tuple[float, ...]
    self_preference: tuple[float, ...]
    questions: int = 60

    @property
    def n(self) -> int:
        return len(self.skill)


def _even(n: int, gap: float) -> list[float]:
    return [round(gap * (n - 1 - i), 4) for i in range(n)]


def _noisy_biased(n: int, gap: float, noise: float, seed: int, name: str) -> Design:
    """Close models; reviewers with judge noise 0.4-1.6, position bias, self-preference."""
    rng = random.Random(seed)
    jn, pb, sp = [], [], []
    for _ in range(n):
        jn.append(round(rng.uniform(0.4, 1.6), 3))
        pb.append(round(rng.gauss(0.0, 0.3), 3))
        sp.append(round(rng.uniform(0.0, 0.6), 3))
    return Design(name, tuple(_even(n, gap)), noise, tuple(jn), tuple(pb), tuple(sp))


def _adversarial(n: int, gap: float, seed: int, name: str) -> Design:
    """The top quarter judges at random (noise 6), a quarter prefers itself strongly
    (1.0-1.5), a quarter has a strong position bias (+-0.8); the rest are fair."""
    rng = random.Random(seed)
    order = list(range(n))
    quarter = max(1, n // 4)
    rest = order[quarter:]
    rng.shuffle(rest)
    selfish, biased = set(rest[:quarter]), set(rest[quarter : 2 * quarter])
    jn, pb, sp = [], [], []
    for i in range(n):
        jn.append(6.0 if i < quarter else round(rng.uniform(0.4, 1.0), 3))
        pb.append(round(rng.choice((-0.8, 0.8)), 3) if i in biased else round(rng.gauss(0, 0.1), 3))
        sp.append(
            round(rng.uniform(1.0, 1.5), 3) if i in selfish else round(rng.uniform(0, 0.2), 3)
        )
    return Design(name, tuple(_even(n, gap)), 0.8, tuple(jn), tuple(pb), tuple(sp))


def _clustered(n: int, seed: int, name: str) -> Design:
    """Tiers: groups of three models 0.05 apart, the groups 0.6 apart; fair-ish judges."""
    rng = random.Random(seed)
    skill = [round(0.6 * (i // 3) + 0.05 * (i % 3), 4) for i in range(n)][::-1]
    jn = tuple(round(rng.uniform(0.3, 1.0), 3) for _ in range(n))
    pb = tuple(round(rng.gauss(0.0, 0.2), 3) for _ in range(n))
    sp = tuple(round(rng.uniform(0.0, 0.3), 3) for _ in range(n))
    return Design(name, tuple(skill), 0.8, jn, pb, sp)


def _spread_clean(n: int, gap: float, seed: int, name: str) -> Design:
    """Models far apart, reviewers with little noise and bias."""
    rng = random.Random(seed)
    jn = tuple(round(rng.uniform(0.2, 0.6), 3) for _ in range(n))
    pb = tuple(round(rng.gauss(0.0, 0.1), 3) for _ in range(n))
    sp = tuple(round(rng.uniform(0.0, 0.1), 3) for _ in range(n))
    return Design(name, tuple(_even(n, gap)), 0.5, jn, pb, sp)


# Designs the rule's constants were chosen on (seeds 0-99) ...
TUNING: dict[str, Callable[[int], Design]] = {
    "t-10-close-0.10": lambda s: _noisy_biased(10, 0.10, 0.8, s, "t-10-close-0.10"),
    "t-14-adversarial-0.10": lambda s: _adversarial(14, 0.10, s, "t-14-adversarial-0.10"),
    "t-9-spread-0.3": lambda s: _spread_clean(9, 0.3, s, "t-9-spread-0.3"),
}
# ... and the designs reported in docs/sampling.md (seeds from 1000), none of them tuned on.
REPORT: dict[str, Callable[[int], Design]] = {
    "12-close-noisy-biased": lambda s: _noisy_biased(12, 0.12, 0.8, s, "12-close-noisy-biased"),
    "16-adversarial-0.08": lambda s: _adversarial(16, 0.08, s, "16-adversarial-0.08"),
    "20-close-noisy-biased": lambda s: _noisy_biased(20, 0.06, 0.8, s, "20-close-noisy-biased"),
    "8-spread-clean": lambda s: _spread_clean(8, 0.25, s, "8-spread-clean"),
    "12-tiers": lambda s: _clustered(12, s, "12-tiers"),
    "14-wide-noisy-biased": lambda s: _noisy_biased(14, 0.2, 1.0, s, "14-wide-noisy-biased"),
    "10-adversarial-0.15": lambda s: _adversarial(10, 0.15, s, "10-adversarial-0.15"),
}


# -- the replica engine ------------------------------------------------------------


def simulate(design: Design, seed: int) -> NDArray[np.int8]:
    """Scores (Q, C, C, R) of every review: -1 A wins, 0 tie, +1 B wins (diagonal unused)."""
    rng = np.random.default_rng([seed, 0xB5])
    c, q = design.n, design.questions
    quality = np.asarray(design.skill)[None, :] + design.answer_noise * rng.standard_normal((q, c))
    gap = quality[:, :, None, None] - quality[:, None, :, None]  # (Q, A, B, 1)
    diff = gap + np.asarray(design.position_bias)[None, None, None, :]
    eye = np.eye(c)
    self_pref = np.asarray(design.self_preference)
    diff = diff + (eye[:, None, :] * self_pref - eye[None, :, :] * self_pref)[None]
    diff = diff + np.asarray(design.judge_noise) * rng.standard_normal((q, c, c, c))
    score = np.where(np.abs(diff) < TIE_BAND, 0, np.where(diff > 0, -1, 1)).astype(np.int8)
    return score


class Replica:
    """One simulated tournament: its full verdicts, ranked in full or on a design."""

    def __init__(self, design: Design, seed: int) -> None:
        self.design = design
        self.seed = seed
        self.score = simulate(design, seed)
        self.models = [f"m{i:02d}" for i in range(design.n)]
        self.qids = [f"q{k:03d}" for k in range(design.questions)]
        self.grid = Grid(design.questions, design.n, design.n)
        self.pi, self.pj = self.grid.pair_members()
        self._verdict = np.array(["A", "tie", "B"])

    def frame(self, units: NDArray[np.int64]) -> pl.DataFrame:
        """The reviews (both orders) of the units, in the log's columns."""
        q, p, r = self.grid.split(units)
        i, j = self.pi[p], self.pj[p]
        qq, aa, bb, rr = (np.concatenate(x) for x in ((q, q), (i, j), (j, i), (r, r)))
        s = self.score[qq, aa, bb, rr]
        models = pl.Enum(self.models)
        return pl.DataFrame(
            {
                "question_id": pl.Series(np.array(self.qids)[qq], dtype=pl.Enum(self.qids)),
                "model_a": pl.Series(np.array(self.models)[aa], dtype=models),
                "model_b": pl.Series(np.array(self.models)[bb], dtype=models),
                "reviewer": pl.Series(np.array(self.models)[rr], dtype=models),
                "verdict": self._verdict[s + 1],
            }
        )

    def rating(self, units: NDArray[np.int64], *, balanced: bool) -> NDArray[np.float64]:
        """BT ratings as the leaderboard fits them (PeerRank weights, weighted BT)."""
        rs = encode_reviews(self.frame(units), contestants=self.models, reviewers=self.models)
        tallies = tally_reviews(rs, per_question=False)
        weights = peerrank(tallies, balanced=balanced).weights
        pairs = pair_matrix(tallies.win[None], weights[None] * rs.n_reviewers)[0]
        out: NDArray[np.float64] = fit_bradley_terry(pairs).rating
        return out

    def prices(self) -> NDArray[np.float64]:
        """Each model's price of a review: 1 for the weakest to 50 for the strongest,
        evenly on a log scale by skill rank (`--per-dollar`)."""
        rank = np.argsort(np.argsort(np.asarray(self.design.skill)))
        out: NDArray[np.float64] = 50.0 ** (rank / max(self.design.n - 1, 1))
        return out

    def cost(self, units: NDArray[np.int64]) -> float:
        """The units' review cost over the mean price per unit (a uniform mix of reviewers)."""
        _, _, r = self.grid.split(units)
        prices = self.prices()
        return float(prices[r].sum() / max(units.size * prices.mean(), 1e-12))

    def sample(
        self, strategy: str, budget: float, *, align: bool = False, per_dollar: bool = False
    ) -> NDArray[np.int64]:
        """The units a sampled run selects, round by round as `SampledPlanner` does.

        `self.rounds` keeps each round's units."""
        full_calls = 2 * self.grid.size
        b = sampling_budget(SamplingConfig(strategy=strategy, budget=budget), full_calls)
        selected = np.zeros(self.grid.size, dtype=np.bool_)
        self.rounds: list[NDArray[np.int64]] = []
        round_ = 0
        while True:
            left = b.units - int(selected.sum())
            reviews = self.frame(np.flatnonzero(selected))
            choice = select_round(
                self.grid,
                selected,
                reviews,
                self.models,
                self.models,
                left=left,
                seed_units=b.seed_units,
                round_units=b.round_units,
                adaptive=strategy == "adaptive",
                rng=np.random.default_rng([self.seed, round_, 0x5A3B]),
                fit_seed=self.seed * 1_000 + round_,
                align=align,
                reviewer_cost=self.prices() if per_dollar else None,
            )
            if choice.units.size == 0:
                return np.flatnonzero(selected)
            selected[choice.units] = True
            self.rounds.append(choice.units)
            round_ += 1

    def shared_prefix(self) -> float:
        """Share of the last sample's review calls whose prefix an earlier call of its round showed.

        Per round, reviewer and question, the units' pairs show each of their
        contestants' answers first in one review each; `2 units - distinct
        contestants` of those reviews find their prefix already shown.
        """
        shared = calls = 0
        for units in self.rounds:
            q, p, r = self.grid.split(units)
            cell = q * self.grid.n_reviewers + r
            seen = np.unique(
                np.concatenate(
                    [
                        cell * self.grid.n_contestants + self.pi[p],
                        cell * self.grid.n_contestants + self.pj[p],
                    ]
                )
            )
            calls += 2 * units.size
            shared += 2 * units.size - seen.size
        return shared / max(calls, 1)


def tau(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    return float(stats.kendalltau(a, b).statistic)


# (name in the table, strategy, align, per dollar) of each comparison, by mode.
COMPARE = {
    "uniform": (("uniform", "uniform", False, False), ("adaptive", "adaptive", False, False)),
    "align": (("adaptive", "adaptive", False, False), ("aligned", "adaptive", True, False)),
    "per_dollar": (("adaptive", "adaptive", False, False), ("per_dollar", "adaptive", False, True)),
}


def replica_job(job: tuple[str, int, tuple[float, ...], str]) -> dict[str, Any]:
    """One design and seed: the full run and both strategies at every budget."""
    name, seed, budgets, mode = job
    design = {**TUNING, **REPORT}[name](seed)
    sim = Replica(design, seed)
    truth = np.asarray(design.skill)
    full = sim.rating(np.arange(sim.grid.size), balanced=False)
    out: dict[str, Any] = {"design": name, "seed": seed, "full_tau_true": tau(full, truth)}
    for budget in budgets:
        for label, strategy, aligned, per_dollar in COMPARE[mode]:
            units = sim.sample(strategy, budget, align=aligned, per_dollar=per_dollar)
            rating = sim.rating(units, balanced=True)
            out[f"{label}@{budget}"] = {
                "tau_full": tau(rating, full),
                "tau_true": tau(rating, truth),
                "share": units.size / sim.grid.size,
                "shared_prefix": sim.shared_prefix(),
                "cost": sim.cost(units),
            }
    return out


# -- the arena engine ----------------------------------------------------------------


def write_tournament(root: Path, design: Design, seed: int, sampling: dict[str, Any]) -> Path:
    models = {}
    for i in range(design.n):
        models[f"model{i:02d}"] = {
            "provider": "sim",
            "sim": {
                "skill": design.skill[i],
                "answer_noise": design.answer_noise,
                "judge_noise": design.judge_noise[i],
                "position_bias": design.position_bias[i],
                "self_preference": design.self_preference[i],
            },
        }
    qfile = root / "questions.jsonl"
    if not qfile.exists():
        with qfile.open("w") as f:
            for k in range(design.questions):
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
        "contestants": list(models),
        "sampling": sampling,
    }
    path = root / f"t-{seed}-{tag}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def arena_run(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"arena run {path} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return summary


def arena_bt(path: Path) -> NDArray[np.float64]:
    board = leaderboard_dict(build_leaderboard(load_tournament(path).output_dir))
    bt = {m["model"]: m["bt"] for m in board["models"]}
    return np.array([bt[name] for name in sorted(bt)])


def arena_job(job: tuple[str, int, tuple[float, ...], str]) -> dict[str, Any]:
    name, seed, budgets, _ = job
    design = REPORT[name](seed)
    truth = np.asarray(design.skill)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        full_path = write_tournament(root, design, seed, {"strategy": "full"})
        full_calls = arena_run(full_path)["by_stage"]["reviews"]["completed"]
        full = arena_bt(full_path)
        out: dict[str, Any] = {"design": name, "seed": seed, "full_tau_true": tau(full, truth)}
        for budget in budgets:
            for strategy in ("uniform", "adaptive"):
                path = write_tournament(
                    root, design, seed, {"strategy": strategy, "budget": budget}
                )
                summary = arena_run(path)
                rating = arena_bt(path)
                out[f"{strategy}@{budget}"] = {
                    "tau_full": tau(rating, full),
                    "tau_true": tau(rating, truth),
                    "share": summary["sampling"]["judged_review_calls"] / full_calls,
                }
    return out


# -- the paired table ----------------------------------------------------------------


def paired(diffs: list[float]) -> dict[str, Any]:
    d = np.asarray(diffs)
    n = d.size
    mean = float(d.mean())
    half = float(stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return {
        "mean": round(mean, 4),
        "ci95": [round(mean - half, 4), round(mean + half, 4)],
        "wins": int((d > 1e-12).sum()),
        "losses": int((d < -1e-12).sum()),
        "ties": int((np.abs(d) <= 1e-12).sum()),
    }


def table(
    rows: list[dict[str, Any]], budgets: tuple[float, ...], *, mode: str = "uniform"
) -> dict[str, Any]:
    base, other = (label for label, _, _, _ in COMPARE[mode])
    out: dict[str, Any] = {}
    for name in dict.fromkeys(r["design"] for r in rows):
        mine = [r for r in rows if r["design"] == name]
        entry: dict[str, Any] = {
            "seeds": len(mine),
            "full_tau_true": round(float(np.mean([r["full_tau_true"] for r in mine])), 4),
        }
        for budget in budgets:
            u = [r[f"{base}@{budget}"] for r in mine]
            a = [r[f"{other}@{budget}"] for r in mine]
            pairs = list(zip(u, a, strict=True))
            entry[str(budget)] = {
                f"{base}_tau_full": round(float(np.mean([x["tau_full"] for x in u])), 4),
                f"{other}_tau_full": round(float(np.mean([x["tau_full"] for x in a])), 4),
                "diff_tau_full": paired([y["tau_full"] - x["tau_full"] for x, y in pairs]),
                f"{base}_tau_true": round(float(np.mean([x["tau_true"] for x in u])), 4),
                f"{other}_tau_true": round(float(np.mean([x["tau_true"] for x in a])), 4),
                "diff_tau_true": paired([y["tau_true"] - x["tau_true"] for x, y in pairs]),
            }
            if mode == "align":
                for label, runs in ((base, u), (other, a)):
                    share = float(np.mean([x.get("shared_prefix", 0.0) for x in runs]))
                    entry[str(budget)][f"{label}_shared_prefix"] = round(share, 4)
            if mode == "per_dollar":
                for label, runs in ((base, u), (other, a)):
                    cost = float(np.mean([x["cost"] for x in runs]))
                    entry[str(budget)][f"{label}_cost"] = round(cost, 4)
                entry[str(budget)]["cost_ratio"] = round(
                    float(np.mean([y["cost"] / x["cost"] for x, y in pairs])), 4
                )
        out[name] = entry
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["report"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--budgets", type=float, nargs="+", default=list(BUDGETS))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--engine", choices=("replica", "arena"), default="replica")
    parser.add_argument(
        "--align", action="store_true", help="adaptive with align: cache against plain adaptive"
    )
    parser.add_argument(
        "--per-dollar",
        action="store_true",
        help="adaptive with reviewers: per_dollar against plain adaptive",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one small design, 2 seeds, one budget: a check that the comparison runs",
    )
    args = parser.parse_args()
    if args.smoke:
        args.designs, args.seeds, args.budgets = ["8-spread-clean"], 2, [0.1]
    if (args.align or args.per_dollar) and args.engine != "replica":
        parser.error("--align and --per-dollar run on the replica engine")
    if args.align and args.per_dollar:
        parser.error("give --align or --per-dollar, not both")
    mode = "align" if args.align else "per_dollar" if args.per_dollar else "uniform"
    names: list[str] = []
    for d in args.designs:
        names += list(TUNING) if d == "tuning" else list(REPORT) if d == "report" else [d]
    if args.engine == "arena":
        names = [n for n in names if n in REPORT][:1] if args.designs == ["report"] else names
    budgets = tuple(args.budgets)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(name, seed, budgets, mode) for name in names for seed in seeds]
    work = replica_job if args.engine == "replica" else arena_job
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            for row in pool.map(work, jobs):
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    else:
        for job in jobs:
            rows.append(work(job))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    result = {
        "engine": args.engine,
        "budgets": list(budgets),
        "seeds": [seeds.start, seeds.stop - 1],
        "wall_s": round(time.perf_counter() - start, 1),
        "compare": {
            "uniform": "adaptive - uniform",
            "align": "aligned - adaptive",
            "per_dollar": "per_dollar - adaptive",
        }[mode],
        "designs": table(rows, budgets, mode=mode),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
