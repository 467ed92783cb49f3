"""Incremental nightly run: a sim tournament of 8 models, then a 9th model is added.

Both runs go through `arena run --json` in this process (plan file, run,
leaderboard history). The second run must make exactly the new calls: the
9th model's answers, its battles with the 8 others in both orders judged by
all 9 reviewers, and every old battle judged by the 9th model as a reviewer.

Prints a final JSON line: full_calls (a from-scratch run of the 9-model
tournament), incremental_calls (calls the second run made), expected_incremental_calls,
incremental_seconds (its wall time), plus first_run_calls and skipped_calls.
incremental_calls must equal expected_incremental_calls (exit 1 otherwise).

    python benchmarks/bench_incremental.py [--smoke]

`--smoke`: 4 models (then a 5th) on 3 questions; the same check of the calls made.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from arena.cli import main as arena_cli

MODELS = 8
QUESTIONS = 20
SMOKE_MODELS = 4
SMOKE_QUESTIONS = 3


def write_tournament(root: Path, models: int, questions: int) -> Path:
    """The benchmark tournament with `models` sim contestants (reviewers: the same)."""
    (root / "q.jsonl").write_text(
        "\n".join(
            json.dumps({"id": f"q{i}", "text": f"Benchmark question {i}?"})
            for i in range(questions)
        )
        + "\n"
    )
    names = [f"model{i}" for i in range(models)]
    cfg = {
        "name": "bench-incremental",
        "seed": 1,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim"}},
        "models": {
            n: {"provider": "sim", "sim": {"skill": i / 2, "answer_words": 30}}
            for i, n in enumerate(names)
        },
        "contestants": names,
    }
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def arena(*args: str) -> tuple[int, dict[str, Any]]:
    """Run an arena command with --json in this process: exit code and JSON output."""
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            arena_cli([*args, "--json"], standalone_mode=False)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, json.loads(out.getvalue().strip().splitlines()[-1])


def full_calls(models: int, questions: int) -> int:
    """Answers plus all-pairs reviews (both orders) by every contestant."""
    return questions * (models + models * (models - 1) * models)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="a small size: a check")
    smoke = parser.parse_args().smoke
    n = SMOKE_MODELS if smoke else MODELS
    questions = SMOKE_QUESTIONS if smoke else QUESTIONS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = write_tournament(root, n, questions)
        code, first = arena("run", str(path))
        assert code == 0, first
        write_tournament(root, n + 1, questions)
        _, plan = arena("plan", str(path))
        start = time.perf_counter()
        code, second = arena("run", str(path))
        seconds = time.perf_counter() - start
        assert code == 0, second
    made = second["completed"] + second["invalid"] + second["failed"]
    expected = questions * (1 + 2 * n * (n + 1) + n * (n - 1) * 1)
    assert expected == full_calls(n + 1, questions) - full_calls(n, questions)
    print(
        f"{n} models: {first['planned']} calls; + model{n}: plan said "
        f"{plan['total']['pending']} to run, the run made {made} and skipped "
        f"{second['skipped']} in {seconds:.2f}s",
        file=sys.stderr,
    )
    print(
        json.dumps(
            {
                "full_calls": full_calls(n + 1, questions),
                "incremental_calls": made,
                "expected_incremental_calls": expected,
                "incremental_seconds": round(seconds, 3),
                "first_run_calls": first["planned"],
                "skipped_calls": second["skipped"],
            }
        )
    )
    return 0 if made == expected == plan["total"]["pending"] else 1


if __name__ == "__main__":
    sys.exit(main())
