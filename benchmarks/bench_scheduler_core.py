"""Scheduler core overhead: how close a rate-limited run gets to its lower bound.

Part 1: 20,000 calls against a fake provider with a fixed 0.05 s latency,
max_concurrency 200 and rpm 60,000, under the governor settings a real
network provider gets (`over_network`: the first attempt alone, buckets of
half a second of the rate; `--local` for the simulator's settings). The
request bucket starts full, so B = rate * burst_seconds requests may start at
once; no schedule within the limits can beat
max(N * latency / concurrency, max(0, N - B) / rate + latency) seconds.
Efficiency is that lower bound over the measured wall time, so it cannot
exceed 1 (target >= 0.95). `naive_lower_bound_seconds` is the bound without
the burst, max(N * latency / concurrency, N / rate), for comparison.

Part 2: zero-latency calls per CPU-second through the same governor code paths
(concurrency, rpm and tpm buckets all active but never binding).

The last line printed is JSON: {"calls", "governor", "wall_seconds",
"lower_bound_seconds", "efficiency", "naive_lower_bound_seconds",
"zero_latency_calls_per_cpu_second"}.

`--smoke`: 2,000 calls in each part, once: a check that both parts still run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter

from arena.config import ProviderConfig, RetryConfig
from arena.providers import Provider
from arena.scheduler import Scheduler
from arena.scheduler._scheduler import NETWORK_BURST_SECONDS
from arena.types import GenerateRequest, GenerateResult, Limits, Message, Usage

_RESULT = GenerateResult("ok", Usage(20, 30))


class FixedLatencyProvider(Provider):
    """Answers every request after a fixed delay."""

    def __init__(self, latency: float, over_network: bool = True) -> None:
        super().__init__("bench", ProviderConfig(type="bench"), {}, 0)
        self.latency = latency
        self.over_network = over_network  # type: ignore[misc]

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        return _RESULT


def _request() -> GenerateRequest:
    return GenerateRequest(model="bench", messages=(Message("user", "x" * 80),), max_tokens=64)


async def _run(
    calls: int, latency: float, limits: Limits, network: bool
) -> tuple[float, float, Counter[str]]:
    sched = Scheduler(
        {"bench": FixedLatencyProvider(latency, network)},
        {"bench": limits},
        RetryConfig(),
    )
    req = _request()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    outcomes = await asyncio.gather(*(sched.call("bench", req) for _ in range(calls)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return wall, cpu, Counter(o.status for o in outcomes)


def main() -> None:
    """Run both parts and print the figures and the JSON summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--rpm", type=float, default=60_000.0)
    parser.add_argument("--zero-latency-calls", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--local", action="store_true", help="the simulator's governor settings (no probe, 1 s)"
    )
    parser.add_argument("--smoke", action="store_true", help="a small size: a check, no figure")
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.zero_latency_calls, args.repeats = 2000, 2000, 1

    n, latency, conc, rpm = args.calls, args.latency, args.concurrency, args.rpm
    network = not args.local
    limits = Limits(max_concurrency=conc, rpm=rpm)
    rate = rpm / 60.0
    # The request bucket starts full: this many requests may go out at once.
    burst = max(1.0, rate * (NETWORK_BURST_SECONDS if network else 1.0))
    lower_bound = max(n * latency / conc, max(0.0, n - burst) / rate + latency)
    naive_bound = max(n * latency / conc, n / rate)
    wall, cpu, statuses = asyncio.run(_run(n, latency, limits, network))
    efficiency = lower_bound / wall
    print(
        f"rate-limited ({'network' if network else 'local'} governor): {n} calls, "
        f"latency {latency}s, concurrency {conc}, rpm {rpm:.0f}: "
        f"wall {wall:.3f}s (cpu {cpu:.3f}s), statuses {dict(statuses)}\n"
        f"  lower bound with the initial {burst:.0f}-request burst {lower_bound:.3f}s "
        f"-> efficiency {efficiency:.3f} (without the burst: {naive_bound:.3f}s)"
    )

    zn = args.zero_latency_calls
    open_limits = Limits(max_concurrency=conc, rpm=1e12, tpm=1e15)
    runs = [asyncio.run(_run(zn, 0.0, open_limits, network)) for _ in range(args.repeats)]
    zwall, zcpu, zstatuses = min(runs, key=lambda r: r[1])
    per_cpu = zn / zcpu if zcpu > 0 else float("inf")
    print(
        f"zero-latency: {zn} calls (best of {args.repeats}): wall {zwall:.3f}s, "
        f"cpu {zcpu:.3f}s, {per_cpu:,.0f} calls per CPU-second, statuses {dict(zstatuses)}"
    )
    if statuses["ok"] != n or any(r[2]["ok"] != zn for r in runs):
        raise SystemExit("benchmark calls did not all succeed")
    print(
        json.dumps(
            {
                "calls": n,
                "governor": "network" if network else "local",
                "wall_seconds": round(wall, 4),
                "lower_bound_seconds": round(lower_bound, 4),
                "efficiency": round(efficiency, 4),
                "naive_lower_bound_seconds": round(naive_bound, 4),
                "zero_latency_calls_per_cpu_second": round(per_cpu),
            }
        )
    )


if __name__ == "__main__":
    main()
