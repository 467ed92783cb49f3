"""How long `arena --help` takes to start, and what it imports.

Runs `arena --help` (the installed entry point's code: `python -m arena`)
7 times in fresh interpreters and reports the median and best wall time, the
median of a bare `python -c pass` for comparison, and whether any heavy
module (polars, pyarrow, pydantic, numpy, the providers' SDKs) was imported.
Last line JSON: {"median_s", "best_s", "python_s", "heavy_imports"}.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

RUNS = 7
HEAVY = ("polars", "pyarrow", "pydantic", "numpy", "scipy", "openai", "anthropic", "google.genai")
PROBE = (
    "import sys, runpy\n"
    "sys.argv = ['arena', '--help']\n"
    "try:\n"
    "    runpy.run_module('arena', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    f"print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
)


def _time(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stderr


def main() -> None:
    times = [_time([sys.executable, "-m", "arena", "--help"])[0] for _ in range(RUNS)]
    bare = [_time([sys.executable, "-c", "pass"])[0] for _ in range(RUNS)]
    heavy = json.loads(_time([sys.executable, "-c", PROBE])[1].strip().replace("'", '"'))
    print(f"arena --help: median {statistics.median(times):.3f} s, best {min(times):.3f} s")
    print(f"python -c pass: median {statistics.median(bare):.3f} s")
    print(f"heavy modules imported: {heavy or 'none'}")
    print(
        json.dumps(
            {
                "median_s": round(statistics.median(times), 3),
                "best_s": round(min(times), 3),
                "python_s": round(statistics.median(bare), 3),
                "heavy_imports": heavy,
            }
        )
    )


if __name__ == "__main__":
    main()
