"""Placing a new model in a ranked tournament: a search over the order against all pairs.

For each case a simulated tournament of 11 models (skills 0.25 apart, three
of them reviewing, noisy answers and judges) is run in full with `arena run`.
A twelfth model is then added, with a skill above all (`top`), in the middle
(`middle`) or below all (`bottom`), twice from copies of that directory:
with `placement: {strategy: search, budget: SHARE}` and with
`placement: {strategy: all-pairs}`. For each case the JSON line holds the
share of the all-pairs review calls the search spent (`reviews_share`), the
new model's true rank among the 12 (`true_rank`), its rank and rank interval
on `arena leaderboard` after the search (`rank`, `rank_low`, `rank_high`),
whether the true rank lies inside, and its rank after all pairs
(`all_pairs_rank`).

    python benchmarks/bench_placement.py [--budget 0.3] [--questions 10] [--seed 7] [--smoke]

`--smoke`: 2 questions, a check that every case still runs (no figure).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from arena.store import RunLog

EXISTING = 11
GAP = 0.25
REVIEWERS = ["m1", "m5", "m9"]
NEW_SKILL = {"top": GAP * (EXISTING + 1), "middle": GAP * (EXISTING / 2 + 0.5), "bottom": 0.0}


def _arena(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout


def _config(root: Path, questions: int, seed: int, new_skill: float | None) -> dict[str, Any]:
    models: dict[str, Any] = {
        f"m{i}": {
            "provider": "sim",
            "sim": {
                "skill": round(GAP * (EXISTING - i), 3),
                "answer_noise": 0.3,
                "judge_noise": 0.5,
            },
        }
        for i in range(EXISTING)
    }
    if new_skill is not None:
        models["new"] = {
            "provider": "sim",
            "sim": {"skill": new_skill, "answer_noise": 0.3, "judge_noise": 0.5},
        }
    with (root / "q.jsonl").open("w") as f:
        for k in range(questions):
            f.write(json.dumps({"id": f"q{k}", "turns": [f"Question {k}?"]}) + "\n")
    return {
        "name": "placement",
        "seed": seed,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 32}}},
        "models": models,
        "contestants": list(models),
        "reviewers": REVIEWERS,
    }


def _add_and_rank(
    base: Path, work: Path, cfg: dict[str, Any], placement: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    shutil.copytree(base / "out", work / "out")
    shutil.copy(base / "q.jsonl", work / "q.jsonl")
    cfg = {**cfg, "output": str(work / "out"), "placement": placement}
    path = work / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    before = RunLog(base / "out").read("reviews").height
    _arena("run", str(path))
    board = json.loads(_arena("leaderboard", str(work / "out"), "--format", "json"))
    row = next(r for r in board["models"] if r["model"] == "new")
    spent = RunLog(work / "out").read("reviews").height - before
    return spent, row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=0.3)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="2 questions: a check, no figure")
    args = parser.parse_args()
    if args.smoke:
        args.questions = 2
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = root / "base"
        base.mkdir()
        cfg = _config(base, args.questions, args.seed, None)
        (base / "t.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        _arena("run", str(base / "t.yaml"))
        all_pairs_calls = EXISTING * 2 * args.questions * len(REVIEWERS)
        for position, skill in NEW_SKILL.items():
            full = _config(base, args.questions, args.seed, skill)
            skills = sorted((m["sim"]["skill"] for m in full["models"].values()), reverse=True)
            true_rank = skills.index(skill) + 1
            search = root / f"{position}-search"
            search.mkdir()
            spent, row = _add_and_rank(
                base, search, full, {"strategy": "search", "budget": args.budget}
            )
            pairs = root / f"{position}-all"
            pairs.mkdir()
            spent_all, row_all = _add_and_rank(base, pairs, full, {"strategy": "all-pairs"})
            cases.append(
                {
                    "position": position,
                    "reviews_share": round(spent / all_pairs_calls, 4),
                    "review_calls": spent,
                    "all_pairs_review_calls": spent_all,
                    "true_rank": true_rank,
                    "rank": row["rank"],
                    "rank_low": row["rank_low"],
                    "rank_high": row["rank_high"],
                    "within_interval": row["rank_low"] <= true_rank <= row["rank_high"],
                    "all_pairs_rank": row_all["rank"],
                    "all_pairs_rank_low": row_all["rank_low"],
                    "all_pairs_rank_high": row_all["rank_high"],
                }
            )
            print(json.dumps(cases[-1]), file=sys.stderr)
    print(json.dumps({"budget": args.budget, "questions": args.questions, "cases": cases}))


if __name__ == "__main__":
    main()
