"""A simulated tournament of about a million calls, run end to end by `arena run`.

12 sim models, all contestants and all reviewers, 630 questions: per question
12 answers and 12 x 11 ordered pairs judged by 12 reviewers, so
630 x (12 + 1584) = 1,005,480 calls. The simulator answers at once (no
latency, no failures), so the figures measure arena itself: planning, the
runner, the scheduler, the log, the end-of-run leaderboard and history.

`arena run t.yaml --json` runs in a child process; its peak resident memory
comes from the kernel's accounting of that child (`getrusage` of the waited
child, which covers the whole process tree it waits on).

The last line printed is the JSON summary:
{"calls", "wall_seconds", "calls_per_second", "peak_rss_mb", "models", "questions"}.
Target: peak_rss_mb <= 1024 for the full size.

Usage: python benchmarks/bench_scale.py [--models N] [--questions N] [--keep DIR] [--smoke]
Smaller sizes (say --questions 20) give the per-call figures sooner; `--smoke`
runs 1 question (1,596 calls), a check that the run still completes.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml


def write_tournament(root: Path, models: int, questions: int) -> Path:
    """The benchmark tournament: `models` sim models, every one a contestant and a reviewer."""
    (root / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i:05d}", "text": f"Scale benchmark question {i}?"}) + "\n"
            for i in range(questions)
        )
    )
    names = [f"model{i:02d}" for i in range(models)]
    config = {
        "name": "bench-scale",
        "seed": 1,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {
            "sim": {"type": "sim", "limits": {"max_concurrency": 256, "rpm": 100_000_000}}
        },
        "models": {
            name: {
                "provider": "sim",
                "sim": {"skill": (i - models / 2) / 4, "answer_words": 40},
            }
            for i, name in enumerate(names)
        },
        "contestants": names,
    }
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def expected_calls(models: int, questions: int) -> int:
    """Answers plus every ordered pair judged by every model."""
    return questions * (models + models * (models - 1) * models)


def run_child(config: Path) -> tuple[dict[str, Any], float, float]:
    """`arena run --json` in a child process: its summary, wall seconds and peak RSS in MiB."""
    command = [sys.executable, "-m", "arena", "run", str(config), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    if done.returncode not in (0, 3):
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"arena run exited {done.returncode}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary, wall, peak_kib / 1024


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--questions", type=int, default=630)
    parser.add_argument("--keep", type=Path, default=None, help="run here and keep the output")
    parser.add_argument("--smoke", action="store_true", help="1 question: a check, no figure")
    args = parser.parse_args(argv)
    if args.smoke:
        args.questions = 1

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        config = write_tournament(root, args.models, args.questions)
        summary, wall, peak_mb = run_child(config)
    calls = int(summary["completed"]) + int(summary["failed"]) + int(summary["invalid"])
    expected = expected_calls(args.models, args.questions)
    print(
        f"{calls} calls made of {expected} planned; run summary: "
        f"completed {summary['completed']}, invalid {summary['invalid']}, "
        f"failed {summary['failed']}",
        file=sys.stderr,
    )
    result = {
        "calls": calls,
        "wall_seconds": round(wall, 1),
        "calls_per_second": round(calls / wall, 1) if wall > 0 else None,
        "peak_rss_mb": round(peak_mb, 1),
        "models": args.models,
        "questions": args.questions,
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
