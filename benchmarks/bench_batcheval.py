"""BatchEval on the simulator: a plumbing check, not evidence that batching helps.

200 sim samples with known latent quality are scored by one sim scorer (batch
size 10, 5 rounds, two-stage, the paper's composition) with each batch
strategy, and with arena's composition for heterogeneous batches, through the
real stage (scheduler, crash-safe log). The baseline scores one sample per
call, repeated until its correlation with the truth matches heterogeneous
BatchEval's, or 20 calls per sample.

Read the gains with care: the simulator builds them in. A sim scorer's sense
of the scale drifts on every call, less when the batch spans the quality range
(the batch "anchors" the scale), so a sample scored alone gets the most drift
and batches that span the range the least. The benchmark therefore reports
every figure twice:

- `sim_gains`: the defaults, batch anchoring on (the built-in gain included);
- `no_sim_gains`: `batch_anchoring: false`, so every call drifts alike,
  whatever its batch: what is left is the plain effect of averaging rounds
  and of sharing a call's drift within a batch.

Prints one line per method and variant, then a final JSON line:
{"sim_gains": {"heterogeneous": {...}, "heterogeneous_arena": {...}, "random": {...},
"homogeneous": {...}, "one_at_a_time": {...}}, "no_sim_gains": {...}}

    python benchmarks/bench_batcheval.py [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
from scipy import stats

from arena.batcheval import (
    TABLE,
    BatchEvalSetup,
    Sample,
    load_template,
    mean_and_spread,
    run_standalone,
)
from arena.config import BatchEvalConfig, ModelConfig, ProviderConfig, RetryConfig, SimParams
from arena.providers.sim import signature
from arena.store import RunLog

N_SAMPLES = 200
SMOKE_SAMPLES = 40  # `--smoke`: a check that every method still runs, no figure
BATCH_SIZE = 10
ROUNDS = 5
MAX_SINGLE_CALLS = 20
SMOKE_SINGLE_CALLS = 3
SEED = 11
WORDS = (
    "the answer explains context evidence detail reason example step result because "
    "therefore however first second finally clearly approach method value"
).split()


def make_samples(n: int = N_SAMPLES) -> tuple[tuple[Sample, ...], dict[str, float]]:
    """Sim samples whose signatures carry a known quality (the truth)."""
    rng = random.Random(SEED)
    samples: list[Sample] = []
    truth: dict[str, float] = {}
    for i in range(n):
        q = rng.gauss(0.0, 1.0)
        words = " ".join(rng.choice(WORDS) for _ in range(40))
        sid = f"s{i:03d}"
        samples.append(
            Sample(
                sid,
                f"{words.capitalize()}.\n{signature('writer', q)}",
                context=f"Question {i % 20}: explain something.",
            )
        )
        truth[sid] = q
    return tuple(samples), truth


def make_setup(
    out: Path,
    strategy: str,
    batch_size: int,
    rounds: int,
    anchoring: bool = True,
    composition: str = "paper",
) -> BatchEvalSetup:
    """A standalone job with one sim scorer."""
    cfg = BatchEvalConfig.model_validate(
        {
            "scorers": ["judge"],
            "criteria": [
                {
                    "name": "quality",
                    "description": "Overall quality of the response.",
                    "scale": {"low": 1, "high": 3},
                    "anchors": {1: "poor", 2: "acceptable", 3: "excellent"},
                }
            ],
            "batch_size": batch_size,
            "rounds": rounds,
            "strategy": strategy,
            "composition": composition,
        }
    )
    return BatchEvalSetup(
        path=out / "bench.yaml",
        name=f"bench-{strategy}",
        config=cfg,
        template=load_template(cfg, out / "bench.yaml"),
        providers={
            "sim": ProviderConfig.model_validate({"type": "sim", "limits": {"max_concurrency": 64}})
        },
        models={
            "judge": ModelConfig(
                provider="sim", sim=SimParams(malformed_rate=0.02, batch_anchoring=anchoring)
            )
        },
        retry=RetryConfig(max_attempts=3, backoff_base=0.0, backoff_max=0.0),
        seed=SEED,
        output_dir=out,
    )


def correlation(scores: dict[str, float | None], truth: dict[str, float]) -> dict[str, float]:
    """Pearson and Spearman against the truth over the scored samples."""
    ids = [s for s, v in scores.items() if v is not None]
    a = [scores[s] for s in ids]
    b = [truth[s] for s in ids]
    return {
        "pearson": round(float(stats.pearsonr(a, b)[0]), 4),
        "spearman": round(float(stats.spearmanr(a, b)[0]), 4),
    }


def run_strategy(
    strategy: str,
    samples: tuple[Sample, ...],
    truth: dict[str, float],
    tmp: Path,
    anchoring: bool = True,
    composition: str = "paper",
) -> dict[str, Any]:
    """Score with one batch strategy; correlation, calls and tokens."""
    setup = make_setup(
        tmp / f"{strategy}-{composition}", strategy, BATCH_SIZE, ROUNDS, anchoring, composition
    )
    summary = asyncio.run(run_standalone(setup, samples))
    scores = {s.sample_id: s.score for s in summary.scores}
    return {
        **correlation(scores, truth),
        "calls": summary.completed + summary.invalid + summary.failed + summary.reasked,
        "batch_calls": summary.planned,
        "reasked": summary.reasked,
        "unscored": summary.unscored,
        "tokens_in": summary.tokens_in,
        "tokens_out": summary.tokens_out,
        "tokens": summary.tokens_in + summary.tokens_out,
    }


def run_single(
    samples: tuple[Sample, ...],
    truth: dict[str, float],
    target: float,
    tmp: Path,
    anchoring: bool = True,
    max_calls: int = MAX_SINGLE_CALLS,
) -> dict[str, Any]:
    """One sample per call, k calls per sample, the smallest k that matches `target`."""
    setup = make_setup(tmp / "single", "random", 1, max_calls, anchoring)
    asyncio.run(run_standalone(setup, samples))
    rows = RunLog(setup.output_dir).read(TABLE)
    best: dict[str, Any] = {}
    for k in range(1, max_calls + 1):
        upto = rows.filter(pl.col("round") <= k)
        by_sample: dict[str, list[float | None]] = {}
        for sid, score in zip(upto["sample_id"].to_list(), upto["score"].to_list(), strict=True):
            by_sample.setdefault(sid, []).append(score)
        scores = {sid: mean_and_spread(v)[0] for sid, v in by_sample.items()}
        tokens_in = int(upto["tokens_in"].sum())
        tokens_out = int(upto["tokens_out"].sum())
        best = {
            **correlation(scores, truth),
            "calls_per_sample": k,
            "calls": int(upto.height + upto["reasked"].sum()),
            "matched": False,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "tokens": tokens_in + tokens_out,
        }
        if best["pearson"] >= target:
            best["matched"] = True
            break
    return best


def run_methods(
    samples: tuple[Sample, ...],
    truth: dict[str, float],
    tmp: Path,
    anchoring: bool,
    max_single: int = MAX_SINGLE_CALLS,
) -> dict[str, dict[str, Any]]:
    """Every method with the sim's batch anchoring on or off."""
    results: dict[str, dict[str, Any]] = {}
    for strategy in ("heterogeneous", "random", "homogeneous"):
        results[strategy] = run_strategy(strategy, samples, truth, tmp, anchoring)
    results["heterogeneous_arena"] = run_strategy(
        "heterogeneous", samples, truth, tmp, anchoring, "arena"
    )
    target = results["heterogeneous"]["pearson"]
    results["one_at_a_time"] = run_single(samples, truth, target, tmp, anchoring, max_single)
    return results


def main() -> None:
    """Run every method, with and without the simulator's built-in gain, and print the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--smoke", action="store_true", help=f"{SMOKE_SAMPLES} samples: a check, no figure"
    )
    smoke = parser.parse_args().smoke
    samples, truth = make_samples(SMOKE_SAMPLES if smoke else N_SAMPLES)
    max_single = SMOKE_SINGLE_CALLS if smoke else MAX_SINGLE_CALLS
    results: dict[str, dict[str, dict[str, Any]]] = {}
    start = time.monotonic()
    for variant, anchoring in (("sim_gains", True), ("no_sim_gains", False)):
        with tempfile.TemporaryDirectory() as tmp_name:
            results[variant] = run_methods(samples, truth, Path(tmp_name), anchoring, max_single)
    for variant, methods in results.items():
        for name, r in methods.items():
            print(
                f"[{variant}] {name:>19}: pearson {r['pearson']:.3f} spearman {r['spearman']:.3f} "
                f"calls {r['calls']:>5} tokens {r['tokens']:>7}"
            )
        het, single = methods["heterogeneous"], methods["one_at_a_time"]
        matched = "matched" if single["matched"] else "not matched"
        print(
            f"[{variant}] heterogeneous BatchEval uses {het['tokens'] / single['tokens']:.0%} of "
            f"the tokens of one-at-a-time scoring ({single['calls_per_sample']} calls per "
            f"sample, {matched})"
        )
    print(
        "plumbing check: sim_gains includes the simulator's built-in batch anchoring; "
        f"no_sim_gains is what is left without it; {time.monotonic() - start:.1f}s"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
