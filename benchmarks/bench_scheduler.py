"""Scheduler efficiency on a sim tournament of 20,000+ calls.

Run 1: fixed per-call latency under concurrency and requests/min limits, with
the governor settings a real network provider gets (`over_network`: the first
attempt alone, buckets of half a second of the rate); efficiency =
lower_bound / wall, where lower_bound is the best any scheduler within the
limits could do. The request bucket starts full, so B = rate * 0.5 requests
may start at once; the last request cannot start before (calls - B) / rate,
no more than `concurrency` calls run at once, and reviews wait for answers:
max((calls - B) / rate + latency, calls * latency / concurrency,
reviews * latency / concurrency + latency). Efficiency cannot exceed 1.
Run 2: zero latency, no limits: calls per CPU-second of the whole engine
(simulator, scheduler, log writes with fsync).
Prints a final JSON line.

    python benchmarks/bench_scheduler.py [--smoke]

`--smoke`: 3 questions (1,368 calls), a check that both runs still work; too
short for a meaningful efficiency.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

from arena.config import load_tournament
from arena.engine import run_tournament
from arena.pipeline import build_plan
from arena.providers.sim import SimProvider
from arena.scheduler._scheduler import NETWORK_BURST_SECONDS

MODELS = 8
QUESTIONS = 45  # 8*45 answers + 45*8*7*8 reviews = 20,520 calls
SMOKE_QUESTIONS = 3
LATENCY = 0.05
CONCURRENCY = 64
RPM = 60_000.0


def write_tournament(
    root: Path, latency: float, limits: dict[str, float], questions: int = QUESTIONS
) -> Path:
    (root / "q.jsonl").write_text(
        "\n".join(
            json.dumps({"id": f"q{i}", "text": f"Benchmark question {i}?"})
            for i in range(questions)
        )
        + "\n"
    )
    names = [f"model{i}" for i in range(MODELS)]
    cfg = {
        "name": "bench",
        "seed": 1,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": limits}},
        "models": {
            n: {
                "provider": "sim",
                "sim": {"skill": float(i), "latency_mean": latency, "answer_words": 30},
            }
            for i, n in enumerate(names)
        },
        "contestants": names,
    }
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="a small size: a check, no figure")
    questions = SMOKE_QUESTIONS if parser.parse_args().smoke else QUESTIONS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "limited"
        root.mkdir()
        limits = {"max_concurrency": CONCURRENCY, "rpm": RPM}
        t = load_tournament(write_tournament(root, LATENCY, limits, questions))
        plan = build_plan(t)
        calls, reviews = plan.size, len(plan.reviews)
        # The simulator, governed as a provider over the network would be.
        SimProvider.over_network = True
        try:
            start = time.perf_counter()
            summary = asyncio.run(run_tournament(t, compact_every=5000))
            wall = time.perf_counter() - start
        finally:
            SimProvider.over_network = False
        assert summary.completed + summary.invalid == calls, summary
        rate = RPM / 60.0
        burst = rate * NETWORK_BURST_SECONDS
        lower = max(
            max(0.0, calls - burst) / rate + LATENCY,
            calls * LATENCY / CONCURRENCY,
            reviews * LATENCY / CONCURRENCY + LATENCY,
        )

        root0 = Path(tmp) / "zero"
        root0.mkdir()
        t0 = load_tournament(write_tournament(root0, 0.0, {}, questions))
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        summary0 = asyncio.run(run_tournament(t0, compact_every=5000))
        cpu = time.process_time() - cpu0
        wall0 = time.perf_counter() - wall0
        assert summary0.pending == 0
    result = {
        "calls": calls,
        "latency_s": LATENCY,
        "max_concurrency": CONCURRENCY,
        "rpm": RPM,
        "governor": "network",
        "wall_seconds": round(wall, 3),
        "lower_bound_seconds": round(lower, 3),
        "efficiency": round(lower / wall, 4),
        "zero_latency_calls_per_cpu_second": round(calls / cpu, 1),
        "zero_latency_wall_seconds": round(wall0, 3),
    }
    print(
        f"{calls} calls, latency {LATENCY}s, concurrency {CONCURRENCY}, rpm {RPM:.0f}: "
        f"wall {wall:.2f}s vs lower bound {lower:.2f}s",
        file=sys.stderr,
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
