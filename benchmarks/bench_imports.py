"""Import and rank AlpacaEval 2.0's annotations: arena's default leaderboard against
AlpacaEval's own `get_winrate`, on the same files and machine.

arena: `build_leaderboard` of every model's `annotations.json` with `--baseline
gpt4_1106_preview` and the other defaults (reliability weights, 100 Elo
orders, 200 bootstrap rounds for the win-rate intervals, sandwich intervals),
in this interpreter, reading included. AlpacaEval: its own package, installed
in a separate environment (`--alpacaeval-python`, default
$ALPACAEVAL_PYTHON), reads each file with pandas and calls
`alpaca_eval.metrics.winrate.get_winrate`, in a fresh process, timed inside
it (the package's import left out). Where that Python or the package is
missing, its side is skipped with the reason on stderr.

Length control likewise: arena's leaderboard with `--length-control`
against AlpacaEval's `get_length_controlled_winrate` per file (its GLM with
5-fold cross-validation, weights not saved). That function downloads two
tables from the Hugging Face hub (the gamed baselines' annotations and each
instruction's difficulty); with no network here, the probe hands it a
stand-in of the same shape (1,610 random rows): the time is what is
compared, not the figures.

Files: DATA/ae/results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json
(AlpacaEval's repository; see bench_anchors.py). --smoke: 3 models.

Last line JSON: {"models", "arena_seconds", "alpacaeval_seconds", "ratio",
"lc_arena_seconds", "lc_alpacaeval_seconds", "lc_ratio"} (ratios: arena over
AlpacaEval; null where AlpacaEval's side was skipped).

--repeat N: each side's fastest of N runs (the first arena run also imports
the ranking's modules).

Usage: python benchmarks/bench_imports.py [--data /tmp/trust] [--smoke] [--repeat N]
       [--alpacaeval-python /path/to/venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arena.report import Leaderboard, LeaderboardOptions, build_leaderboard

BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"

PROBE = """
import json, sys, time
import pandas as pd
from alpaca_eval.metrics.winrate import get_winrate
files = json.loads(sys.argv[1])
best = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    for path in files:
        get_winrate(pd.read_json(path))
    best = min(best, time.perf_counter() - start)
print(best)
"""

LC_PROBE = """
import json, sys, tempfile, time
import numpy as np, pandas as pd
import alpaca_eval.metrics.glm_winrate as glm
rng = np.random.default_rng(0)
n = 805
gamed = pd.DataFrame({
    "index": np.tile(np.arange(n), 2),
    "preference": rng.uniform(0, 1, 2 * n),
    "std_delta_len": np.r_[rng.uniform(0.5, 2, n), -rng.uniform(0.5, 2, n)],
    "instruction_difficulty": np.tile(rng.normal(0, 1, n), 2),
    "not_gamed_baseline": False,
    "model": np.repeat(["gamed_long", "gamed_short"], n),
})
path = tempfile.NamedTemporaryFile(suffix=".csv", delete=False).name
gamed.to_csv(path, index=False)
glm.hf_hub_download = lambda **kw: path
files = json.loads(sys.argv[1])
best = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    for f in files:
        glm.get_length_controlled_winrate(
            pd.read_json(f), save_weights_dir=None, is_warn_extreme_changes=False
        )
    best = min(best, time.perf_counter() - start)
print(best)
"""


def _files(data: Path, smoke: bool) -> list[Path]:
    root = data / "ae" / "results"
    found = sorted(
        p
        for p in root.glob(f"*/{ANNOTATOR}/annotations.json")
        if p.stat().st_size > 10 and p.parent.parent.name != BASELINE
    )
    return found[:3] if smoke else found


def _alpacaeval_seconds(
    python: str | None, files: list[Path], repeat: int, probe: str = PROBE
) -> float | None:
    if not python or not Path(python).is_file():
        print(
            f"alpacaeval: skipped (no Python with alpaca_eval installed: {python!r}; "
            "set --alpacaeval-python or $ALPACAEVAL_PYTHON)",
            file=sys.stderr,
        )
        return None
    done = subprocess.run(
        [python, "-W", "ignore", "-c", probe, json.dumps([str(f) for f in files]), str(repeat)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or ["no message"]
        print(f"alpacaeval: skipped (its run failed: {last[0]})", file=sys.stderr)
        return None
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path("/tmp/trust"))
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--alpacaeval-python", default=os.environ.get("ALPACAEVAL_PYTHON"))
    parser.add_argument("--repeat", type=int, default=1, help="report each side's fastest run")
    args = parser.parse_args(argv)
    files = _files(args.data, args.smoke)
    if not files:
        print(f"skipped: no AlpacaEval annotations under {args.data}/ae/results", file=sys.stderr)
        out: dict[str, Any] = {
            "models": 0,
            "arena_seconds": None,
            "alpacaeval_seconds": None,
            "ratio": None,
            "lc_arena_seconds": None,
            "lc_alpacaeval_seconds": None,
            "lc_ratio": None,
        }
        print(json.dumps(out))
        return out

    def timed(options: LeaderboardOptions) -> tuple[float, Leaderboard]:
        best, board = float("inf"), None
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            board = build_leaderboard(reviews_file=files, options=options)
            best = min(best, time.perf_counter() - start)
        assert board is not None
        return best, board

    arena, board = timed(LeaderboardOptions(baseline=BASELINE))
    theirs = _alpacaeval_seconds(args.alpacaeval_python, files, args.repeat)
    arena_lc, _ = timed(LeaderboardOptions(baseline=BASELINE, length_control=True))
    theirs_lc = (
        None
        if theirs is None
        else _alpacaeval_seconds(args.alpacaeval_python, files, args.repeat, LC_PROBE)
    )
    out = {
        "models": len(board.vs_baseline or []),
        "arena_seconds": round(arena, 3),
        "alpacaeval_seconds": None if theirs is None else round(theirs, 3),
        "ratio": None if theirs is None else round(arena / theirs, 3),
        "lc_arena_seconds": round(arena_lc, 3),
        "lc_alpacaeval_seconds": None if theirs_lc is None else round(theirs_lc, 3),
        "lc_ratio": None if theirs_lc is None else round(arena_lc / theirs_lc, 3),
    }
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
