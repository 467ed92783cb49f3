"""`arena leaderboard DIR --format json` on a big run directory, timed from the shell.

Meant for the directory `bench_scale.py --keep DIR` leaves (DIR/out: about a
million calls at the default size). Each run is a fresh process (cold:
imports, reading the log, numba loading its cached kernels), its output
discarded; the figures are the median and range over the runs of:

- `wall_seconds`: the command's wall time;
- `cpu_seconds`: its user + system CPU time (all its threads), which a busy
  machine inflates less than the wall time;
- `peak_rss_mb`: its peak resident memory (the kernel's accounting of the
  waited child).

`load_average` is the machine's 1-minute load average before each run: on a
shared machine, read the wall time against it. The issue's targets for the
1M-call log: 4 s and 800 MB.

Usage: python benchmarks/bench_big_leaderboard.py DIR [--runs N]
       python benchmarks/bench_big_leaderboard.py --smoke
--smoke: no DIR; bench_scale's tournament at a small size (4 models, 10
questions: 490 calls) is run into a temporary directory and timed once.
The last line printed is the JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def one_run(directory: Path) -> dict[str, float]:
    """One cold `arena leaderboard DIR --format json`: wall, CPU and peak memory."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # From a scratch directory: `python -m` puts the working directory first on the
    # path, which must not shadow the arena being measured.
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, "-m", "arena", "leaderboard", str(directory), "--format", "json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            cwd=scratch,
        )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"arena leaderboard exited {done.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "load": load}


def _isolated(directory: Path) -> dict[str, float]:
    """`one_run` in a child Python, with its peak memory: a process's children's
    peak is the largest of any child so far, so each run gets a parent of its own."""
    code = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from bench_big_leaderboard import one_run\n"
        "out = one_run(Path(sys.argv[1]))\n"
        "out['peak_kib'] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"the measuring child exited {done.returncode}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _summary(values: list[float], digits: int) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "directory", type=Path, nargs="?", help="a run directory (bench_scale's DIR/out)"
    )
    parser.add_argument("--runs", type=int, default=3, help="cold runs to time")
    parser.add_argument("--smoke", action="store_true", help="a small run made here, one run")
    args = parser.parse_args(argv)
    if args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            return _measure(_small_run(Path(tmp)), 1)
    if args.directory is None:
        parser.error("a run directory is needed (or --smoke)")
    if not (args.directory / "log").is_dir():
        parser.error(f"{args.directory}: not a run directory (no log/)")
    return _measure(args.directory, args.runs)


def _small_run(root: Path) -> Path:
    """bench_scale's tournament at a small size, run to the end in `root`: its out/."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scale import run_child, write_tournament

    run_child(write_tournament(root, 4, 10))
    return root / "out"


def _measure(directory: Path, runs_wanted: int) -> dict[str, Any]:
    """Time `runs_wanted` cold runs on `directory` and print the summary line."""
    runs = [_isolated(directory) for _ in range(max(1, runs_wanted))]
    for k, run in enumerate(runs, 1):
        print(
            f"run {k}: {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU, "
            f"{run['peak_kib'] / 1024:.0f} MB peak, load {run['load']:.2f}",
            file=sys.stderr,
        )
    result = {
        "wall_seconds": _summary([r["wall"] for r in runs], 2),
        "cpu_seconds": _summary([r["cpu"] for r in runs], 2),
        "peak_rss_mb": _summary([r["peak_kib"] / 1024 for r in runs], 1),
        "load_average": _summary([r["load"] for r in runs], 2),
        "runs": len(runs),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
