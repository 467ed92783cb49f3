"""BatchEval with `examples:` on the simulator: a plumbing check, not evidence about examples.

160 sim samples (20 questions, known latent quality) are scored by one sim
scorer (batch size 10, 3 rounds, two-stage) through the real stage, and
compared with simulated human scores (the latent quality on the 1-5 scale plus
noise). A pool of 60 human-scored items of 20 other questions is shown as
`examples:` (k = 2, retrieved by TF-IDF of the context, same-question
exclusion). Four variants, each over several seeds (the seed changes the
batches and the sim's draws):

- `none`: no examples;
- `examples_knob_off`: examples in the prompt, the sim's `example_gain` 0
  (the default): the sim models no gain from examples, so any difference is
  the noise of other draws;
- `examples_knob_on`: the same prompts with `example_gain` 0.5: the sim's
  noise and drift are divided by 1.5 when it sees examples, a gain this
  benchmark builds in;
- `label_copy`: no LLM at all: each sample scored by the mean human score of
  its k nearest pool items. The pool holds other questions only, so it should
  be near 0: a high value would mean leakage.

Prints one line per variant and seed, the paired differences (mean over
seeds and a 95% t interval; `examples_knob_on - examples_knob_off` isolates
the knob: the same prompts and draws), then a final JSON line.

    python benchmarks/bench_examples.py [--smoke]

`--smoke`: 5 questions and 2 seeds, a check that every variant still runs (no figure).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import tempfile
from pathlib import Path
from typing import Any

from scipy import stats

from arena.batcheval import BatchEvalSetup, Sample, load_template, run_standalone
from arena.config import (
    BatchEvalConfig,
    ExamplesConfig,
    ModelConfig,
    ProviderConfig,
    RetryConfig,
    SimParams,
    load_example_pool,
)
from arena.examples import label_copy
from arena.providers.sim import signature

N_QUESTIONS = 20
PER_QUESTION = 8
POOL_QUESTIONS = 20
POOL_PER_QUESTION = 3
SEEDS = (1, 2, 3, 4, 5)
SMOKE_QUESTIONS = 5
SMOKE_SEEDS = (1, 2)
HUMAN_NOISE = 0.4
TOPICS = (
    "rivers birds engines forests comets islands bridges deserts glaciers harbours "
    "kettles lanterns orchards quarries reefs tunnels valleys windmills yachts zeppelins"
).split()


def _scale(q: float) -> float:
    """Latent quality on the 1-5 scale (the logistic the sim uses, without drift)."""
    return 1 + 4 / (1 + math.exp(-q / 1.5))


def make_data(
    tmp: Path, questions: int = N_QUESTIONS
) -> tuple[tuple[Sample, ...], dict[str, float], Path]:
    """The samples, their simulated human scores, and the pool file."""
    rng = random.Random(7)
    samples: list[Sample] = []
    human: dict[str, float] = {}
    for j in range(questions):
        for i in range(PER_QUESTION):
            q = rng.gauss(0.0, 1.0)
            sid = f"q{j}-{i}"
            text = f"Reply {i} on {TOPICS[j]}.\n{signature('writer', q)}"
            context = f"Question {j}: tell me about {TOPICS[j]}."
            samples.append(Sample(sid, text, context, question_id=f"q{j}"))
            human[sid] = min(5.0, max(1.0, _scale(q) + rng.gauss(0.0, HUMAN_NOISE)))
    rows = []
    for j in range(POOL_QUESTIONS):
        for i in range(POOL_PER_QUESTION):
            q = rng.gauss(0.0, 1.0)
            rows.append(
                {
                    "id": f"p{j}-{i}",
                    "question_id": f"p{j}",
                    "context": f"Another question: what about {TOPICS[j]} and more?",
                    "text": f"A pool reply {i}.",
                    "criterion": "quality",
                    "score": round(min(5.0, max(1.0, _scale(q) + rng.gauss(0, HUMAN_NOISE))), 1),
                }
            )
    pool = tmp / "pool.jsonl"
    pool.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tuple(samples), human, pool


def make_setup(out: Path, seed: int, pool_file: Path | None, gain: float) -> BatchEvalSetup:
    cfg = BatchEvalConfig.model_validate(
        {
            "scorers": ["judge"],
            "criteria": [
                {
                    "name": "quality",
                    "description": "Overall quality.",
                    "scale": {"low": 1, "high": 5},
                }
            ],
            "batch_size": 10,
            "rounds": 3,
        }
    )
    pool = None
    if pool_file is not None:
        section = ExamplesConfig(
            pool=str(pool_file), k=2, select="retrieved", apply_to=["batcheval"]
        )
        pool = load_example_pool(section, out / "bench.yaml", seed)
    return BatchEvalSetup(
        path=out / "bench.yaml",
        name="bench-examples",
        config=cfg,
        template=load_template(cfg, out / "bench.yaml", examples=pool is not None),
        providers={
            "sim": ProviderConfig.model_validate({"type": "sim", "limits": {"max_concurrency": 64}})
        },
        models={
            "judge": ModelConfig(
                provider="sim",
                sim=SimParams(score_noise=0.6, score_drift=0.5, example_gain=gain),
            )
        },
        retry=RetryConfig(max_attempts=3, backoff_base=0.0, backoff_max=0.0),
        seed=seed,
        output_dir=out,
        examples=pool,
    )


def pearson(scores: dict[str, float | None], human: dict[str, float]) -> float:
    ids = [s for s, v in scores.items() if v is not None]
    return float(stats.pearsonr([scores[s] for s in ids], [human[s] for s in ids])[0])


def run_variant(
    samples: tuple[Sample, ...], human: dict[str, float], seed: int, pool: Path | None, gain: float
) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        setup = make_setup(Path(tmp), seed, pool, gain)
        summary = asyncio.run(run_standalone(setup, samples))
    return pearson({s.sample_id: s.score for s in summary.scores}, human)


def interval(diffs: list[float]) -> dict[str, float]:
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return {"mean": round(mean, 4), "lo": round(mean - half, 4), "hi": round(mean + half, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="a small size: a check, no figure")
    smoke = parser.parse_args().smoke
    seeds = SMOKE_SEEDS if smoke else SEEDS
    with tempfile.TemporaryDirectory() as tmp:
        samples, human, pool_file = make_data(Path(tmp), SMOKE_QUESTIONS if smoke else N_QUESTIONS)
        variants: dict[str, list[float]] = {
            "none": [],
            "examples_knob_off": [],
            "examples_knob_on": [],
        }
        for seed in seeds:
            for name, pool, gain in (
                ("none", None, 0.0),
                ("examples_knob_off", pool_file, 0.0),
                ("examples_knob_on", pool_file, 0.5),
            ):
                r = run_variant(samples, human, seed, pool, gain)
                variants[name].append(round(r, 4))
                print(f"{name:18s} seed {seed}: pearson vs human {r:.4f}", flush=True)
        setup = make_setup(Path(tmp), 0, pool_file, 0.0)
        assert setup.examples is not None
        copied = {
            s.id: label_copy(setup.examples, "quality", (s.question_id, s.context, s.text))
            for s in samples
        }
        copy_r = round(pearson(copied, human), 4)
        print(f"{'label_copy':18s}         pearson vs human {copy_r:.4f}")
    pairs = {
        "examples_knob_off - none": ("examples_knob_off", "none"),
        "examples_knob_on - none": ("examples_knob_on", "none"),
        "examples_knob_on - examples_knob_off": ("examples_knob_on", "examples_knob_off"),
    }
    diffs = {
        label: interval([x - y for x, y in zip(variants[a], variants[b], strict=True)])
        for label, (a, b) in pairs.items()
    }
    for label, d in diffs.items():
        print(f"{label}: {d['mean']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}] (95% t, by seed)")
    out: dict[str, Any] = {
        "note": "plumbing check: the sim builds in the knob's gain; not evidence about real judges",
        "seeds": list(seeds),
        "pearson": variants,
        "label_copy": copy_r,
        "paired_differences": diffs,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
