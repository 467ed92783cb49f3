"""Shared biases on the simulator: does the default leaderboard stay right, or say it may not?

Two designs, each over several seeds, run through `arena run`'s real pipeline
(scheduler, crash-safe log) and ranked by `build_leaderboard` as the CLI does
(default options: reliability weights, sandwich intervals). The truth is the
simulator's skills.

length: 8 models with skills 1.4 to -1.4 (steps of 0.4) whose answer lengths
    are drawn per seed independently of skill (median words 40 to 400,
    log-uniform; log-sd 0.35 per answer). Every model reviews with
    `length_bias` 1.0 (`--length-bias`): the longer answer gets that times the
    relative length difference added to its perceived quality. Done when the default `rank`
    keeps Kendall tau >= 0.85 to the truth on every seed, or else every seed
    warns about a style effect and the rank intervals (rank_low..rank_high)
    cover the true rank for at least 90% of the models.
null: the length design's models without any length bias, the stronger ones
    writing longer answers (400 down to 50 words): the default order should stay
    raw Bradley-Terry (no style effect to find).
bloc: 6 honest models (skills 1.5 to -0.5) and 4 near-identical weak ones
    (same style marker, answer length and judging; skills -0.9 to -2.1) that
    vote for each other (`ally_preference` 4.0, more than any skill gap: added
    for an answer by a bloc member). Done when the default weighting keeps tau >= 0.85 on every
    seed, and under `--weights peerrank` a warning names the four members and
    no honest reviewer.

Prints one line per design and seed, a summary per design (default rank
against the raw Bradley-Terry rank on the same seeds), then a final JSON line
{"length": {...}, "null": {...}, "bloc": {...}, "seconds"}.

This is a check of the method on designs it was not tuned on: the biases are
built into the simulator, so it shows what the defaults do with a known truth,
not how strongly real judges are swayed by length or collude.

Usage: python benchmarks/bench_bias.py [--seeds N] [--length-bias B] [--smoke]
--smoke: one seed of each design, 10 questions (the plumbing only).
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
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict

LENGTH_QUESTIONS = 60
BLOC_QUESTIONS = 40
LENGTH_BIAS = 1.0
ALLY_PREFERENCE = 4.0
BLOC = ("bloc0", "bloc1", "bloc2", "bloc3")
HONEST = ("h0", "h1", "h2", "h3", "h4", "h5")
TAU_MIN = 0.85
COVER_MIN = 0.9


def kendall(x: list[float], y: list[float]) -> float:
    """Kendall tau-b of two score lists (higher = better in both)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dx = np.sign(a[:, None] - a[None, :])
    dy = np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(a.size, 1)
    tx, ty = np.count_nonzero(dx[upper]), np.count_nonzero(dy[upper])
    return float((dx * dy)[upper].sum() / np.sqrt(tx * ty)) if tx and ty else float("nan")


def length_models(seed: int, bias: float = LENGTH_BIAS) -> dict[str, dict[str, Any]]:
    """The length design's models: skill by name, answer length drawn apart from it."""
    rng = np.random.default_rng(1000 + seed)
    words = np.rint(40 * 10 ** rng.uniform(0.0, 1.0, 8)).astype(int)
    return {
        f"m{k}": {
            "skill": round(1.4 - 0.4 * k, 2),
            "answer_words": int(words[k]),
            "answer_words_spread": 0.35,
            "length_bias": bias,
            "judge_noise": 0.5,
        }
        for k in range(8)
    }


def null_models() -> dict[str, dict[str, Any]]:
    """The null design: no reviewer is length-biased, the stronger models write longer."""
    return {
        f"m{k}": {
            "skill": round(1.4 - 0.4 * k, 2),
            "answer_words": round(400 / 10 ** (k / 7)),
            "answer_words_spread": 0.35,
            "judge_noise": 0.5,
        }
        for k in range(8)
    }


def bloc_models() -> dict[str, dict[str, Any]]:
    """The bloc design's models: six honest, four alike that vote for each other."""
    honest = {name: {"skill": round(1.5 - 0.4 * k, 2)} for k, name in enumerate(HONEST)}
    bloc = {
        name: {
            "skill": round(-0.9 - 0.4 * k, 2),
            "style": "bloc",
            "ally_preference": ALLY_PREFERENCE,
        }
        for k, name in enumerate(BLOC)
    }
    return {**honest, **bloc}


def write_tournament(folder: Path, seed: int, questions: int, models: dict[str, Any]) -> Path:
    lines = [json.dumps({"id": f"q{i}", "text": f"Bias question {i}?"}) for i in range(questions)]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    config: dict[str, Any] = {
        "name": "bench-bias",
        "seed": seed,
        "questions": "questions.jsonl",
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": {name: {"provider": "sim", "sim": sim} for name, sim in models.items()},
        "contestants": list(models),
    }
    path = folder / "tournament.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def board(run_dir: Path, weights: str) -> dict[str, Any]:
    options = LeaderboardOptions(weights=weights, elo_orders=0, bootstrap=0)
    data: dict[str, Any] = leaderboard_dict(build_leaderboard(run_dir, options=options))
    return data


def ranked(data: dict[str, Any], skills: dict[str, float]) -> dict[str, Any]:
    """Tau of the default rank and of the raw BT rank to the truth; interval coverage."""
    truth = sorted(skills, key=lambda m: -skills[m])
    true_rank = {m: k + 1 for k, m in enumerate(truth)}
    rows = data["models"]
    names = [row["model"] for row in rows]
    truth_scores = [skills[m] for m in names]
    rank = [-float(row["rank"]) for row in rows]
    raw = [-float(row.get("bt_rank", row["rank"])) for row in rows]
    covered = [row["rank_low"] <= true_rank[row["model"]] <= row["rank_high"] for row in rows]
    raw_covered = [
        row.get("bt_rank_low", row["rank_low"])
        <= true_rank[row["model"]]
        <= row.get("bt_rank_high", row["rank_high"])
        for row in rows
    ]
    return {
        "tau": kendall(rank, truth_scores),
        "tau_raw": kendall(raw, truth_scores),
        "cover": float(np.mean(covered)),
        "cover_raw": float(np.mean(raw_covered)),
        "rank_by": data.get("rank_by", "bt"),
        "style_warned": any(w.startswith("style effect") for w in data.get("warnings", [])),
    }


def length_seed(
    seed: int, questions: int, folder: Path, bias: float, null: bool = False
) -> dict[str, Any]:
    models = null_models() if null else length_models(seed, bias)
    tournament = load_tournament(write_tournament(folder, seed, questions, models))
    asyncio.run(run_tournament(tournament))
    data = board(tournament.output_dir, "reliability")
    out = ranked(data, {m: p["skill"] for m, p in models.items()})
    coef = data["style_control"].get("coefficients", {}).get("length", {})
    out["length_coef"] = coef.get("coef")
    out["seed"] = seed
    return out


def bloc_seed(seed: int, questions: int, folder: Path) -> dict[str, Any]:
    models = bloc_models()
    tournament = load_tournament(write_tournament(folder, seed, questions, models))
    asyncio.run(run_tournament(tournament))
    skills = {m: p["skill"] for m, p in models.items()}
    out: dict[str, Any] = {"seed": seed}
    for weights in ("reliability", "peerrank", "equal"):
        data = board(tournament.output_dir, weights)
        got = ranked(data, skills)
        lines = [w for w in data.get("warnings", []) if w.startswith("reviewer bloc")]
        # "reviewer bloc: a, b, c agree with each other ...": the members, by name.
        named = [m for w in lines for m in w.split(": ", 1)[1].split(" agree")[0].split(", ")]
        share = sum(data["reviewer_weights"][m] for m in BLOC) / sum(
            data["reviewer_weights"].values()
        )
        out[weights] = {
            "tau": got["tau"],
            "bloc_share": share,
            "named": named,
            "exact": sorted(named) == sorted(BLOC),
            "outsized": any("outsized" in w for w in lines),
        }
    return out


def fmt(x: float) -> str:
    return f"{x:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--length-bias", type=float, default=LENGTH_BIAS)
    parser.add_argument("--smoke", action="store_true", help="one seed, 10 questions")
    args = parser.parse_args()
    seeds = list(range(1, 2 if args.smoke else args.seeds + 1))
    length_q = 10 if args.smoke else LENGTH_QUESTIONS
    bloc_q = 10 if args.smoke else BLOC_QUESTIONS
    started = time.perf_counter()
    length: list[dict[str, Any]] = []
    bloc: list[dict[str, Any]] = []
    print(
        "length design: seed  tau(rank)  tau(raw BT)  cover(rank)  cover(raw)  rank_by  "
        "warned  coef"
    )
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            row = length_seed(seed, length_q, Path(tmp), args.length_bias)
        length.append(row)
        print(
            f"  {seed:4d}  {fmt(row['tau']):>9}  {fmt(row['tau_raw']):>11}  "
            f"{fmt(row['cover']):>11}  {fmt(row['cover_raw']):>10}  {row['rank_by']:>8}  "
            f"{row['style_warned']!s:>6}  {row['length_coef']}"
        )
    null: list[dict[str, Any]] = []
    print("null design (no length bias, stronger = longer): seed  tau(rank)  rank_by  coef")
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            row = length_seed(seed, length_q, Path(tmp), 0.0, null=True)
        null.append(row)
        print(f"  {seed:4d}  {fmt(row['tau']):>9}  {row['rank_by']:>8}  {row['length_coef']}")
    print("bloc design: seed  weights  tau(rank)  bloc weight share  warning names")
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            row = bloc_seed(seed, bloc_q, Path(tmp))
        bloc.append(row)
        for weights in ("reliability", "peerrank", "equal"):
            got = row[weights]
            print(
                f"  {seed:4d}  {weights:<11}  {fmt(got['tau'])}  {fmt(got['bloc_share'])}  "
                f"{','.join(got['named']) or '-'}"
            )
    taus = np.array([r["tau"] for r in length])
    raws = np.array([r["tau_raw"] for r in length])
    length_summary = {
        "seeds": len(length),
        "questions": length_q,
        "length_bias": args.length_bias,
        "tau_min": float(taus.min()),
        "tau_mean": float(taus.mean()),
        "tau_raw_mean": float(raws.mean()),
        "tau_gain_mean": float((taus - raws).mean()),
        "tau_gain_min": float((taus - raws).min()),
        "cover_min": float(min(r["cover"] for r in length)),
        "cover_raw_min": float(min(r["cover_raw"] for r in length)),
        "warned_every_seed": all(r["style_warned"] for r in length),
        "style_ordered_seeds": sum(r["rank_by"] == "bt_style" for r in length),
    }
    length_summary["done"] = bool(
        length_summary["tau_min"] >= TAU_MIN
        or (length_summary["warned_every_seed"] and length_summary["cover_min"] >= COVER_MIN)
    )
    default = np.array([r["reliability"]["tau"] for r in bloc])
    peer = np.array([r["peerrank"]["tau"] for r in bloc])
    bloc_summary = {
        "seeds": len(bloc),
        "questions": bloc_q,
        "tau_min": float(default.min()),
        "tau_mean": float(default.mean()),
        "tau_peerrank_mean": float(peer.mean()),
        "tau_equal_mean": float(np.mean([r["equal"]["tau"] for r in bloc])),
        "share_default_mean": float(np.mean([r["reliability"]["bloc_share"] for r in bloc])),
        "share_peerrank_mean": float(np.mean([r["peerrank"]["bloc_share"] for r in bloc])),
        "peerrank_named_exactly": sum(r["peerrank"]["exact"] for r in bloc),
    }
    bloc_summary["done"] = bool(
        bloc_summary["tau_min"] >= TAU_MIN and bloc_summary["peerrank_named_exactly"] == len(bloc)
    )
    print(
        f"length, paired over {len(length)} seeds: tau(rank) - tau(raw BT) mean "
        f"{length_summary['tau_gain_mean']:+.3f} (min {length_summary['tau_gain_min']:+.3f}); "
        f"tau(rank) min {length_summary['tau_min']:.3f}; done {length_summary['done']}"
    )
    print(
        f"bloc, paired over {len(bloc)} seeds: tau default {bloc_summary['tau_mean']:.3f} vs "
        f"peerrank {bloc_summary['tau_peerrank_mean']:.3f}; bloc named exactly under peerrank "
        f"on {bloc_summary['peerrank_named_exactly']}/{len(bloc)}; done {bloc_summary['done']}"
    )
    null_summary = {
        "seeds": len(null),
        "tau_min": float(min(r["tau"] for r in null)),
        "style_ordered_seeds": sum(r["rank_by"] == "bt_style" for r in null),
    }
    print(
        f"null, {len(null)} seeds: style-controlled order on "
        f"{null_summary['style_ordered_seeds']}; "
        f"tau(rank) min {null_summary['tau_min']:.3f}"
    )
    result = {
        "length": length_summary,
        "null": null_summary,
        "bloc": bloc_summary,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
