"""Where the compiled Elo kernel starts to pay: NumPy's lockstep Elo against numba's, by size.

Weighted Elo is the one pass of `arena.rank` with a compiled kernel; below
`arena.rank._elo.COMPILED_MIN_ROWS` rated reviews NumPy runs every order in
lockstep instead, so a small log never loads numba. For each size,
bench_rank's synthetic tournament (20 models, every ordered pair judged by
every model, answers' style columns included) is written to Parquet, then
ranked in fresh interpreters the way `arena leaderboard` does: import
`arena.rank`, read the frame, `encode_reviews`, `rank_reviews` with the
defaults (reliability weights, 100 Elo orders, 200 bootstrap rounds, style
control). Each process forces one Elo path: NumPy (`COMPILED_MIN_ROWS` above
the size) or the kernel (threshold 0), whose figure includes loading numba
and its cached kernel. The kernel is compiled (cached) by a warm-up run first.

Last line JSON: {"sizes": [...], "numpy_seconds": [...], "numba_seconds": [...],
"numpy_cpu_seconds": [...], "numba_cpu_seconds": [...]}: wall and CPU seconds
(all threads), each the median of --runs runs, the two paths alternating.

Usage: python benchmarks/bench_small_rank.py [--sizes 5000,20000,60000,150000] [--runs 3] [--smoke]
--smoke: one size (5,000), one run of each path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_rank import synthetic_reviews, with_answer_styles  # noqa: E402

PROBE = """
import sys, time
start, cpu = time.perf_counter(), time.process_time()
from arena.rank import _elo
_elo.COMPILED_MIN_ROWS = int(sys.argv[2])
import polars as pl
from arena.rank import encode_reviews, rank_reviews
rank_reviews(encode_reviews(pl.read_parquet(sys.argv[1])))
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def _seconds(path: Path, threshold: int) -> tuple[float, float]:
    """Wall and CPU seconds (all threads) of one fresh process ranking `path`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), str(threshold)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    """Time both paths at each size and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="5000,20000,60000,150000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one size (5,000), one run")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.runs = "5000", 1
    sizes = [int(s) for s in args.sizes.split(",")]
    names = ("numpy_seconds", "numba_seconds", "numpy_cpu_seconds", "numba_cpu_seconds")
    out: dict[str, list[float]] = {"sizes": [], **{name: [] for name in names}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"reviews_{n}.parquet"
            with_answer_styles(synthetic_reviews(n)).write_parquet(path)
            _seconds(path, 0)  # compile and cache the kernel
            runs: dict[int, list[tuple[float, float]]] = {10**18: [], 0: []}
            for _ in range(args.runs):  # the two paths alternate: a busy machine slows both
                for threshold, found in runs.items():
                    found.append(_seconds(path, threshold))
            plain, compiled = runs[10**18], runs[0]
            figures = (
                statistics.median(w for w, _ in plain),
                statistics.median(w for w, _ in compiled),
                statistics.median(c for _, c in plain),
                statistics.median(c for _, c in compiled),
            )
            print(
                f"{n} reviews: numpy {figures[0]:.2f} s ({figures[2]:.2f} CPU), "
                f"numba {figures[1]:.2f} s ({figures[3]:.2f} CPU)",
                file=sys.stderr,
            )
            out["sizes"].append(n)
            for name, value in zip(names, figures, strict=True):
                out[name].append(round(value, 2))
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
