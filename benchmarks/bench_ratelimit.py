"""The rate governor against a server that enforces R requests/minute.

The fake server (`arena fake-server`, its own process) enforces R rpm per key
and answers 429 with OpenAI's headers (retry-after-ms, x-ratelimit-*). The
client is the real OpenAI provider under the real Scheduler, default retry
policy, 64 concurrent requests at most.

Run 1: the client is configured at R. Run 2: it is misconfigured at 3R and
must learn the real limit from 429s and headers. Each run sends calls for
RUN_SECONDS; its rate is measured in steady state, after a WARMUP_SECONDS
start (the initial bucket burst; in run 2 the first adaptation), while 429s
and failures are counted over the whole run (429s by the server).

Prints a final JSON line: limit_rpm, matched_rpm, matched_429, matched_failed,
over_rpm, over_429, over_failed (plus calls and timing details).
Targets: matched_rpm >= 0.97 R with matched_429 == 0; over_rpm >= 0.85 R
with over_failed == 0.

    python benchmarks/bench_ratelimit.py [--smoke]

`--smoke`: each run lasts SMOKE_RUN_SECONDS, a check that both runs still work
(too short a window for the targets).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from arena.config import ProviderConfig, RetryConfig
from arena.providers import create_provider
from arena.scheduler import Scheduler
from arena.types import GenerateRequest, Limits, Message

LIMIT_RPM = 3000.0
RUN_SECONDS = 30.0
WARMUP_SECONDS = 3.0
SMOKE_RUN_SECONDS = 4.0
SMOKE_WARMUP_SECONDS = 1.0
CONCURRENCY = 64
KEY_ENV = "ARENA_BENCH_KEY"


def start_server(root: Path) -> tuple[subprocess.Popen[str], str]:
    """`arena fake-server` on a free port, enforcing LIMIT_RPM per key."""
    config = {"limits": {"rpm": LIMIT_RPM}, "models": {"bench": {"answer_words": 10}}}
    (root / "fake.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "fake-server",
            "--port",
            "0",
            "--config",
            str(root / "fake.yaml"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on" not in first:
        proc.kill()
        raise RuntimeError(f"fake server did not start: {first!r}")
    return proc, first.rsplit(" ", 1)[-1].strip()


def server_stats(url: str) -> dict[str, Any]:
    """The server's counters."""
    with urllib.request.urlopen(f"{url}/fake/stats") as response:
        stats: dict[str, Any] = json.load(response)
    return stats


def reset_server(url: str) -> None:
    """Clear the server's counters and buckets."""
    request = urllib.request.Request(f"{url}/fake/reset", method="POST", data=b"")
    urllib.request.urlopen(request).close()


async def one_run(
    url: str,
    client_rpm: float,
    key: str,
    run_seconds: float = RUN_SECONDS,
    warmup_seconds: float = WARMUP_SECONDS,
) -> dict[str, Any]:
    """Send calls for `run_seconds` through the governor at `client_rpm`; measure."""
    os.environ[KEY_ENV] = key
    provider = create_provider(
        "bench", ProviderConfig(type="openai", base_url=f"{url}/v1", api_key_env=KEY_ENV), {}, 0
    )
    scheduler = Scheduler(
        {"bench": provider},
        {"bench": Limits(max_concurrency=CONCURRENCY, rpm=client_rpm)},
        RetryConfig(),
    )
    start = time.monotonic()
    finished: list[float] = []
    statuses: dict[str, int] = {}
    n = 0

    async def call(i: int) -> None:
        request = GenerateRequest(
            model="bench", messages=(Message("user", f"Question {i}?"),), max_tokens=64
        )
        outcome = await scheduler.call("bench", request)
        statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
        if outcome.ok:
            finished.append(time.monotonic())

    tasks: set[asyncio.Task[None]] = set()
    # Keep enough calls waiting that the governor, not the caller, sets the pace.
    while time.monotonic() - start < run_seconds:
        while len(tasks) < 2 * CONCURRENCY:
            task = asyncio.create_task(call(n))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            n += 1
        await asyncio.sleep(0.01)
    await asyncio.gather(*tasks)
    await provider.close()
    end = max(finished)
    window_start = start + warmup_seconds
    in_window = sum(1 for t in finished if t > window_start)
    return {
        "rpm": in_window / (end - window_start) * 60.0,
        "calls": n,
        "ok": statuses.get("ok", 0),
        "failed": statuses.get("failed", 0),
        "wall_s": end - start,
        "rate_fraction": scheduler.governor("bench").rate_fraction,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="short runs: a check, no figure")
    smoke = parser.parse_args().smoke
    run_seconds = SMOKE_RUN_SECONDS if smoke else RUN_SECONDS
    warmup_seconds = SMOKE_WARMUP_SECONDS if smoke else WARMUP_SECONDS
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp))
        try:
            results: dict[str, dict[str, Any]] = {}
            for label, factor in (("matched", 1.0), ("over", 3.0)):
                reset_server(url)
                results[label] = asyncio.run(
                    one_run(url, LIMIT_RPM * factor, f"key-{label}", run_seconds, warmup_seconds)
                )
                results[label]["429"] = server_stats(url)["counts"].get("status.429", 0)
                r = results[label]
                print(
                    f"{label}: client at {LIMIT_RPM * factor:.0f} rpm, server at "
                    f"{LIMIT_RPM:.0f}: {r['rpm']:.0f} rpm steady, {r['ok']} ok, "
                    f"{r['429']} 429s, {r['failed']} failed, {r['wall_s']:.1f}s",
                    file=sys.stderr,
                )
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    m, o = results["matched"], results["over"]
    print(
        json.dumps(
            {
                "limit_rpm": LIMIT_RPM,
                "matched_rpm": round(m["rpm"], 1),
                "matched_429": m["429"],
                "matched_failed": m["failed"],
                "over_rpm": round(o["rpm"], 1),
                "over_429": o["429"],
                "over_failed": o["failed"],
                "matched_calls": m["ok"],
                "over_calls": o["ok"],
                "run_seconds": run_seconds,
                "warmup_seconds": warmup_seconds,
            }
        )
    )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def _missing() -> list[str]:
    """What this benchmark needs and this machine lacks: the fake server and the OpenAI SDK."""
    return [
        m
        for m in (
            "aiohttp",
            "openai",
        )
        if not _installed(m)
    ]


if __name__ == "__main__":
    if _missing():  # a machine without the extras: say why, and do not fail the smoke run
        print(
            f"skipped: needs {', '.join(_missing())} (pip install -e '.[providers]')",
            file=sys.stderr,
        )
        sys.exit(0)
    main()
