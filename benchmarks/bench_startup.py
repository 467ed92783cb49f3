"""How long everyday commands take from the shell, against the cost of importing numpy and polars.

Each figure is the median wall time of several fresh interpreters (cold
processes, warm file cache), measured round-robin so that a busy machine slows
every command alike:

- `help_seconds`: `arena --help` (and `heavy_imports`: whether it loaded any
  heavy module: polars, pyarrow, pydantic, numpy, the providers' SDKs);
- `python_seconds`: a bare `python -c pass`;
- `import_floor_seconds`: `python -c "import numpy, polars"`, what any command
  that reads a log pays before it starts;
- `leaderboard_demo_seconds`, `status_demo_seconds`, `plan_demo_seconds`,
  `report_demo_seconds`: `arena leaderboard DIR`, `arena status DIR`,
  `arena plan tournaments/demo.yaml --out DIR` and `arena report DIR -o FILE`
  on the demo run (6 models, 30 questions, 5,400 reviews);
- `*_ratio`: each command's median over the import floor. Targets:
  leaderboard <= 2.5, status and plan <= 2.

The commands run as an installed arena does, with its modules' bytecode
cached: `PYTHONDONTWRITEBYTECODE` is dropped from their environment (with it
set, as on some CI machines, every arena module is compiled again in every
process, about 0.7 s more per command).

Usage: python benchmarks/bench_startup.py [--runs N] [--demo DIR] [--smoke]
Without --demo, the demo tournament is run into a temporary directory first.
`--smoke`: every command once, without the warm-up round: a check that they
all still run, not a figure.
The last line printed is the JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "tournaments" / "demo.yaml"
HEAVY = ("polars", "pyarrow", "pydantic", "numpy", "scipy", "openai", "anthropic", "google.genai")
PROBE = (
    "import sys\n"
    "from arena.cli import main\n"
    "try:\n"
    "    main(['--help'])\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
)


# Bytecode written and read, as after `pip install` (see the module docstring).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=REPO, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}")
    return elapsed, done.stderr


def _demo_run(out: Path) -> None:
    args = [sys.executable, "-m", "arena", "run", str(DEMO), "--out", str(out)]
    print(f"making the demo run in {out} ...", file=sys.stderr)
    _time(args)


def measure(runs: int, demo: Path, scratch: Path, warm_up: bool = True) -> dict[str, Any]:
    """Median seconds of each command over `runs` round-robin rounds, and the ratios."""
    arena = [sys.executable, "-m", "arena"]
    commands = {
        "help_seconds": [*arena, "--help"],
        "python_seconds": [sys.executable, "-c", "pass"],
        "import_floor_seconds": [sys.executable, "-c", "import numpy, polars"],
        "leaderboard_demo_seconds": [*arena, "leaderboard", str(demo)],
        "status_demo_seconds": [*arena, "status", str(demo)],
        "plan_demo_seconds": [*arena, "plan", str(DEMO), "--out", str(demo)],
        "report_demo_seconds": [*arena, "report", str(demo), "-o", str(scratch / "r.html")],
    }
    for args in commands.values() if warm_up else ():  # once each first: file cache warm
        _time(args)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            times[name].append(_time(args)[0])
    result: dict[str, Any] = {name: round(statistics.median(t), 3) for name, t in times.items()}
    floor = result["import_floor_seconds"]
    for name in ("leaderboard", "status", "plan", "report"):
        result[f"{name}_ratio"] = round(result[f"{name}_demo_seconds"] / floor, 2)
    probe = _time([sys.executable, "-c", PROBE])[1].strip().splitlines()[-1]
    heavy = json.loads(probe.replace("'", '"'))
    result["heavy_imports"] = heavy
    result["runs"] = runs
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command")
    parser.add_argument("--demo", type=Path, default=None, help="an existing demo run directory")
    parser.add_argument("--smoke", action="store_true", help="each command once: a check")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs = 1
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        demo = args.demo
        if demo is None:
            demo = scratch / "demo"
            _demo_run(demo)
        result = measure(args.runs, demo, scratch, warm_up=not args.smoke)
    for name, value in result.items():
        if name.endswith("_seconds"):
            print(f"{name}: {value:.3f} s", file=sys.stderr)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
