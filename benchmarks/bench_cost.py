"""What a peer tournament costs at list prices, lever by lever: caching, batch, sampling.

A tournament of 10 models on the fake server's three APIs (`arena
fake-server` in a subprocess): gpt-4.1, gpt-4.1-mini, gpt-4o-mini and
gpt-4.1-nano on its OpenAI API, claude-opus-4-5, claude-sonnet-4-5 and
claude-haiku-4-5 on its Anthropic API, gemini-2.5-pro, gemini-2.5-flash and
gemini-2.5-flash-lite on its Gemini API, each priced at genai-prices' list,
cache and batch prices. Every model answers every question (answers of
about 800 tokens, 700 to 900, so that a review's prefix through its first
answer, about 1,050 tokens with the `cache_friendly` instructions, passes
the 1,024-token caching minimum of OpenAI's models and Claude Sonnet 4.5)
and reviews every ordered pair. The fake server applies each model's own
documented minimum (docs/cost.md): Claude Opus 4.5 and Haiku 4.5 cache
nothing under 4,096 tokens and the Gemini 2.5 models nothing under 2,048, so
at this shape their reviews are never cached; `ratio_per_model` shows what
each model's own rules give. The same tournament runs seven ways, each in its
own output directory on a fresh server:

- `full`: today's way: the default review template, one request per call,
  every pair (the APIs still apply their automatic caches, as OpenAI and
  Gemini do for every client; Anthropic caches only what a request marks).
- `cached`: the `cache_friendly` template (cache breakpoints and a
  per-question cache key), the same calls.
- `batch`: the default template, every call in batch jobs (`arena run --batch`).
- `adaptive`: the default template, `sampling: {strategy: adaptive, budget: 0.1}`.
- `by_reliability`: `cache_friendly`, batch mode and the 10% adaptive design,
  its reviewers chosen by measured reliability (the default).
- `aligned`: `by_reliability` with `sampling: {align: cache}`: the same units
  per pair, each round's units placed so that a reviewer's units sharing a
  contestant land on one question (docs/sampling.md).
- `all`: every lever: `by_reliability` with `sampling: {reviewers:
  per_dollar}`: the refitted rounds choose each pair's reviewers by
  reliability per dollar of what their reviews have cost so far.

Prints JSON: the cost of each (USD, summed over every row of the log: what
this tournament cost, nothing extrapolated; `scale` is 1.0), the ratio of each
to `cost_full`, the same per API and per model, the answers' share of each, the cache hit
rate per API (share of review requests that read from the cache, and the
cached share of their input tokens), the calls made, the batch jobs and the
steps a batch run waits through (each a job round trip), and
`tau_all_vs_full` (Kendall tau of the Bradley-Terry order of `all` against
`full`'s; `tau_by_reliability_vs_full` and `tau_aligned_vs_full` likewise).
`cost_cache_bound` is what the `cached` way would cost if every shareable
prompt prefix after the first were read from the cache (`_cache_bound`), and
`cached_vs_bound` its bill over that bound: how much of what the cache could
save the order of calls reaches. `ratio_cached_prompts` is the `cached` way's
prompt cost (input, cache reads and writes) over `full`'s, per API and per
model: what the layout changes (the whole bill also holds the simulated
reviews' output, whose length differs between two runs by chance). `checks`
ends the JSON: each figure docs/cost.md holds the benchmark to, true or false.

The size: 8 questions (`--questions`), so each way is 80 answers and 7,200
reviews (10 answers and 900 reviews a question). Every call goes through the
fake server over HTTP, so the seven ways take minutes; more questions change
the totals, not the ratios (every question's calls are alike, and no cache
entry is shared across questions). The 10%
adaptive designs spend 720 reviews over 45 pairs, so their ranking
(`tau_all_vs_full`) is noisier than a bigger tournament's; the ranking at a
bigger size is measured on the simulator (below). `--smoke` runs the first
4 models on 2 questions: a check that every way still runs, not a figure.

Batch jobs: the server does a job's lines spread over 30 minutes of its
clock, each line meeting the 5-minute cache at its own moment, and the
bench runs the server's clock 3,000 times fast during a batch run, so a job
ends in well under a second and the cache sees a 30-minute job.

What the fake server does not model: the simulator's reviews are short
(about 15 tokens of output) where a real judge writes 100-500 tokens. Output
is never cached and costs 4-8 times input, so with real judges the cache
saves a smaller share of the bill; `long_review_output` reprices every
figure as if each review had written 300 more output tokens. Direct calls
are answered at once, so all of a run's calls sharing a prefix come within
the cache's 5 minutes (docs/cost.md: the order of calls).

The ranking at a bigger size: `--ranking-questions 80` also runs `full`,
`all`, `by_reliability` and `aligned` with all 80 questions on the embedded
simulator (`type: sim`, the fake server's model and reviewer settings, the
same templates and sampling, and each model priced at its batch list price
under `prices:` so that `all` chooses its reviewers by cost as it does on the
fake server; batch mode and the cache change a call's price, never its
verdict) and reports `ranking_at_shape`: Kendall tau of each against `full`
and against the true skill order, per seed (`--ranking-seeds`, from
`--seed`); `--ranking-only` skips the cost runs.
`--judges weaker_noisier` makes the weaker (and cheaper) models the noisier
judges, from noise 0.8 for the best to 2.9 for the weakest: the case where
choosing reviewers by price (`all`) could cost ranking accuracy.

    python benchmarks/bench_cost.py [--questions 8] [--seed 1] [--ranking-questions 80] [--smoke]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import polars as pl
import yaml
from scipy.stats import kendalltau

import arena
from arena.config import Question
from arena.config._load import REVIEW_TEMPLATES
from arena.fakeserver._cache import CHARS_PER_TOKEN, rules_for
from arena.review import render_review_with_breaks
from arena.scheduler._prices import library_price
from arena.stages import register_all_tables
from arena.store import RunLog

QUESTIONS = 8
# `--ranking-only` without `--ranking-questions`: the ranking at ten times the size.
RANKING_QUESTIONS = 80
# `--smoke`: the first models of MODELS (at least one per API) on a few questions.
SMOKE_MODELS = 4
SMOKE_QUESTIONS = 2
TYPES = ("openai", "anthropic", "gemini")
KEYS = {t: f"bench-cost-{t}" for t in TYPES}
ENV = {t: f"BENCH_COST_{t.upper()}_KEY" for t in TYPES}
# name: (API, skill); the better models rank higher, as a real board would roughly have it.
MODELS: dict[str, tuple[str, float]] = {
    "claude-opus-4-5": ("anthropic", 1.6),
    "gpt-4.1": ("openai", 1.3),
    "gemini-2.5-pro": ("gemini", 1.1),
    "claude-sonnet-4-5": ("anthropic", 0.9),
    "gemini-2.5-flash": ("gemini", 0.5),
    "gpt-4.1-mini": ("openai", 0.3),
    "claude-haiku-4-5": ("anthropic", 0.1),
    "gpt-4o-mini": ("openai", -0.3),
    "gemini-2.5-flash-lite": ("gemini", -0.6),
    "gpt-4.1-nano": ("openai", -1.0),
}
# About 700 tokens an answer (four characters a token; the filler words
# average 7.4 characters with their space).
ANSWER_WORDS = 450
LONG_REVIEW_EXTRA_TOKENS = 300
BATCH_JOB_SECONDS = 1800.0
# The sampled designs whose ranking is compared with the full design's.
RANKED = ("all", "by_reliability", "aligned")
CLOCK_STEP_SECONDS = 60.0  # moved forward every 20 ms during a batch run: 3,000x

WAYS: dict[str, dict[str, Any]] = {
    "full": {"template": None, "batch": False, "sampling": None},
    "cached": {"template": "cache_friendly", "batch": False, "sampling": None},
    "batch": {"template": None, "batch": True, "sampling": None},
    "adaptive": {"template": None, "batch": False, "sampling": 0.1},
    "by_reliability": {"template": "cache_friendly", "batch": True, "sampling": 0.1},
    "aligned": {"template": "cache_friendly", "batch": True, "sampling": 0.1, "align": "cache"},
    "all": {
        "template": "cache_friendly",
        "batch": True,
        "sampling": 0.1,
        "reviewers": "per_dollar",
    },
}


def _server_config(seed: int) -> dict[str, Any]:
    return {
        "seed": seed,
        "keys": list(KEYS.values()),
        # A job's lines are done spread over 30 minutes of the server's clock (each
        # meets the 5-minute cache at its own moment); the clock runs fast in batch runs.
        "batch": {"delay_seconds": BATCH_JOB_SECONDS},
        "models": {
            m: {
                "skill": skill,
                "answer_words": ANSWER_WORDS,
                "answer_words_spread": 0.06,
                "judge_noise": 0.8,
                "position_bias": 0.2,
            }
            for m, (_, skill) in MODELS.items()
        },
    }


class Server:
    """`arena fake-server` in a subprocess on a free port."""

    def __init__(self, root: Path, seed: int) -> None:
        cfg = root / "fake.yaml"
        cfg.write_text(yaml.safe_dump(_server_config(seed)))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "fake-server", "--port", "0", "--config", str(cfg)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        self.url = line.split("listening on", 1)[1].strip()

    def advance(self, seconds: float) -> None:
        """Move the server's clock forward."""
        req = urllib.request.Request(
            self.url + "/fake/clock",
            json.dumps({"advance": seconds}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=30).read()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/fake/stats", timeout=30) as r:
            return dict(json.loads(r.read()))

    def close(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _tournament(
    root: Path, url: str, questions: int, way: dict[str, Any], models: list[str]
) -> Path:
    root.mkdir(parents=True)
    (root / "q.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i:03d}",
                    "text": f"Question {i}: explain, with the reasoning step by step, "
                    f"how one would approach problem number {i} of the benchmark set.",
                }
            )
            + "\n"
            for i in range(questions)
        )
    )
    providers: dict[str, Any] = {}
    for t in TYPES:
        entry: dict[str, Any] = {
            "type": t,
            "base_url": url + "/v1" if t == "openai" else url,
            "api_key_env": ENV[t],
            "timeout": 60,
            "limits": {"max_concurrency": 32},
        }
        if way["batch"]:
            entry["batch"] = {"max_requests": 10_000, "max_wait": 0.5, "poll_seconds": 0.2}
        providers[f"p_{t}"] = entry
    cfg: dict[str, Any] = {
        "name": "bench-cost",
        "seed": 3,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": providers,
        "models": {m: {"provider": f"p_{MODELS[m][0]}", "max_tokens": 1200} for m in models},
        "contestants": models,
        "review": {"max_tokens": 200},
    }
    return _write_tournament(root, cfg, way)


def _write_tournament(root: Path, cfg: dict[str, Any], way: dict[str, Any]) -> Path:
    """`cfg` with `way`'s review template and sampling design, written as `root/t.yaml`."""
    if way["template"] is not None:
        cfg["review"]["template"] = way["template"]
    if way["sampling"] is not None:
        cfg["sampling"] = {"strategy": "adaptive", "budget": way["sampling"]}
        if way.get("align"):
            cfg["sampling"]["align"] = way["align"]
        if way.get("reviewers"):
            cfg["sampling"]["reviewers"] = way["reviewers"]
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({ENV[t]: KEYS[t] for t in TYPES})
    return env


def _calls(out: Path) -> pl.DataFrame:
    log = RunLog(out)
    cols = [
        "id",
        "provider",
        "status",
        "tokens_in",
        "tokens_out",
        "tokens_cache_read",
        "tokens_cache_write",
        "cost_usd",
    ]
    answers = log.read_all("answers").select(*cols, pl.col("model"), pl.lit("answers").alias("t"))
    reviews = log.read_all("reviews").select(
        *cols, pl.col("reviewer").alias("model"), pl.lit("reviews").alias("t")
    )
    return pl.concat([answers, reviews])


def _cache_bound(out: Path, calls: pl.DataFrame, questions: Path) -> float:
    """What the run would cost if every shareable prompt prefix after the first were read
    from the cache: the bill as logged, less what each review paid at full input price
    for the part of its shared prefix it did not read.

    A review's shareable prefix, in the cache-friendly layout, runs through answer A
    (its last cache break): every review by the same model of the same question with
    the same first answer sends it. Within each such group the first review pays as
    logged; each later one could read the part of the prefix the model's own rules
    cache (docs/cost.md: at least the model's minimum; on OpenAI and Gemini in steps
    of 128 tokens, on Anthropic up to the break), and the bound prices what it did not
    read at the cache-read price instead of the input price. The shorter shared prefix
    (instructions and question, about 250 tokens) is under every model's minimum.
    """
    log = RunLog(out)
    texts = {
        row["id"]: row["text"]
        for row in (json.loads(line) for line in questions.read_text().splitlines() if line)
    }
    answers = dict(log.read_all("answers").select("id", "answer_turns").iter_rows())
    reviews = log.read_all("reviews").filter(pl.col("status") == "ok").sort("started_at")
    template = REVIEW_TEMPLATES["cache_friendly"].read_text()
    seen: set[tuple[str, str, str]] = set()
    saving = 0.0
    for q, reviewer, a_id, b_id, read in reviews.select(
        "question_id", "reviewer", "answer_a_id", "answer_b_id", "tokens_cache_read"
    ).iter_rows():
        if (reviewer, q, a_id) not in seen:
            seen.add((reviewer, q, a_id))
            continue
        question = Question(q, (texts[q],))
        _, breaks = render_review_with_breaks(template, question, answers[a_id], answers[b_id])
        prefix = breaks[-1] // CHARS_PER_TOKEN
        api = MODELS[reviewer][0]
        rules = rules_for(api, reviewer)
        if prefix < rules.min_tokens:
            continue
        cacheable = prefix if rules.explicit else prefix // rules.step_tokens * rules.step_tokens
        price = library_price(reviewer, api, None)
        assert price is not None
        missed = max(0, cacheable - int(read or 0))
        saving += missed * (price.input - (price.cache_read or price.input)) / 1e6
    return float(calls["cost_usd"].sum() or 0.0) - saving


def _order(out: Path) -> list[str]:
    """The models by Bradley-Terry rating, best first (those without battles last)."""
    rows = arena.leaderboard(out).to_dict()["models"]
    rated = sorted((r for r in rows if r["bt"] is not None), key=lambda r: -float(r["bt"]))
    return [r["model"] for r in rated] + [r["model"] for r in rows if r["bt"] is None]


def _clock(server: Server, stop: threading.Event) -> None:
    """Batch jobs end in seconds: the server's clock runs fast while a batch run lasts."""
    while not stop.wait(0.02):
        server.advance(CLOCK_STEP_SECONDS)


def _run_way(root: Path, name: str, questions: int, seed: int, models: list[str]) -> dict[str, Any]:
    way = WAYS[name]
    root.mkdir(parents=True)
    server = Server(root, seed)
    try:
        path = _tournament(root / "run", server.url, questions, way, models)
        command = [sys.executable, "-m", "arena", "run", str(path), "--json"]
        if way["batch"]:
            command.append("--batch")
        stop = threading.Event()
        clock = threading.Thread(target=_clock, args=(server, stop), daemon=True)
        if way["batch"]:
            clock.start()
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=_env())
        finally:
            stop.set()
            if clock.is_alive():
                clock.join()  # its last advance ends before the server closes
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{name}: arena run exited {done.returncode}: {done.stderr[-2000:]}")
        counts = server.stats()["counts"]
    finally:
        server.close()
    out = path.parent / "out"
    register_all_tables()
    log = RunLog(out)
    jobs = log.read("batch_jobs") if way["batch"] else None
    # Steps that wait for the one before: the answers, then the reviews (one step) or
    # each round of the sampled design.
    rounds = log.read("sampling")["round"].n_unique() if way["sampling"] else 1
    calls = _calls(out)
    # The cache bound of the cached way (the same calls as `full`, the cache layout)
    bound = (
        _cache_bound(out, calls, path.parent / "q.jsonl")
        if way["template"] == "cache_friendly" and not way["sampling"] and not way["batch"]
        else None
    )
    return {
        "calls": calls,
        "bound": bound,
        "order": _order(out),
        "seconds": seconds,
        "counts": counts,
        "jobs": 0 if jobs is None else jobs.height,
        "steps": 1 + rounds,
    }


def _output_price(model: str) -> tuple[float, float]:
    """A model's output price per token: plain and at its batch price."""
    price = library_price(model, MODELS[model][0], None)
    assert price is not None and price.batch is not None
    return price.output / 1e6, price.batch.output / 1e6


def _summary(results: dict[str, dict[str, Any]], models: list[str]) -> dict[str, Any]:
    def cost(df: pl.DataFrame) -> float:
        return float(df["cost_usd"].sum() or 0.0)

    def long_cost(name: str, df: pl.DataFrame) -> float:
        reviews = df.filter(pl.col("t") == "reviews").group_by("model").len()
        extra = 0.0
        for model, n in reviews.iter_rows():
            plain, batch = _output_price(model)
            extra += n * LONG_REVIEW_EXTRA_TOKENS * (batch if WAYS[name]["batch"] else plain)
        return cost(df) + extra

    full = cost(results["full"]["calls"])
    out: dict[str, Any] = {}
    for name, r in results.items():
        out[f"cost_{name}"] = round(cost(r["calls"]), 2)
    for name, r in results.items():
        out[f"ratio_{name}"] = round(cost(r["calls"]) / full, 4)
    if results.get("cached", {}).get("bound") is not None:
        bound = results["cached"]["bound"]
        out["cost_cache_bound"] = round(bound, 2)
        out["cached_vs_bound"] = round(cost(results["cached"]["calls"]) / bound, 4)
    if "cached" in results:
        # What the layout changes: the prompts' cost (input, cache reads and writes).
        # The whole bill also holds the simulated reviews' output, whose length differs
        # between two runs by chance (a sim verdict is drawn from the prompt's text).
        def prompts(df: pl.DataFrame) -> float:
            plain = [_output_price(m)[0] for m in df["model"].to_list()]
            out_cost = (df["tokens_out"].fill_null(0).cast(pl.Float64) * pl.Series(plain)).sum()
            return cost(df) - float(out_cost)

        full_calls, cached_calls = results["full"]["calls"], results["cached"]["calls"]
        out["ratio_cached_prompts"] = {
            **{
                api: round(
                    prompts(cached_calls.filter(pl.col("provider") == f"p_{api}"))
                    / prompts(full_calls.filter(pl.col("provider") == f"p_{api}")),
                    4,
                )
                for api in TYPES
            },
            **{
                model: round(
                    prompts(cached_calls.filter(pl.col("model") == model))
                    / prompts(full_calls.filter(pl.col("model") == model)),
                    4,
                )
                for model in models
            },
        }
    per_api: dict[str, dict[str, float]] = {}
    for api in TYPES:
        base = cost(results["full"]["calls"].filter(pl.col("provider") == f"p_{api}"))
        per_api[api] = {
            name: round(cost(r["calls"].filter(pl.col("provider") == f"p_{api}")) / base, 4)
            for name, r in results.items()
        }
    out["ratio_per_api"] = per_api
    # Per model (its answers and its reviews): what a tournament of models with
    # one model's cache rules would see; the minimum cached prefix is per model.
    per_model: dict[str, dict[str, float]] = {}
    for model in models:
        base = cost(results["full"]["calls"].filter(pl.col("model") == model))
        per_model[model] = {
            name: round(cost(r["calls"].filter(pl.col("model") == model)) / base, 4)
            for name, r in results.items()
        }
    out["ratio_per_model"] = per_model
    out["answers_share"] = {
        name: round(cost(r["calls"].filter(pl.col("t") == "answers")) / cost(r["calls"]), 4)
        for name, r in results.items()
    }
    hits: dict[str, dict[str, dict[str, float]]] = {}
    for name, r in results.items():
        reviews = r["calls"].filter((pl.col("t") == "reviews") & (pl.col("tokens_in") > 0))
        hits[name] = {}
        for api in TYPES:
            part = reviews.filter(pl.col("provider") == f"p_{api}")
            n = max(part.height, 1)
            hits[name][api] = {
                "hit_rate": round(float((part["tokens_cache_read"].fill_null(0) > 0).sum()) / n, 4),
                "cached_input_share": round(
                    float(part["tokens_cache_read"].fill_null(0).sum())
                    / max(float(part["tokens_in"].sum()), 1.0),
                    4,
                ),
            }
    out["cache"] = hits
    full_long = long_cost("full", results["full"]["calls"])
    out["long_review_output"] = {
        f"ratio_{name}": round(long_cost(name, r["calls"]) / full_long, 4)
        for name, r in results.items()
    }
    out["calls"] = {name: r["calls"]["id"].n_unique() for name, r in results.items()}
    out["seconds"] = {name: round(r["seconds"], 1) for name, r in results.items()}
    out["batch_jobs"] = {name: r["jobs"] for name, r in results.items() if WAYS[name]["batch"]}
    out["batch_steps"] = {name: r["steps"] for name, r in results.items() if WAYS[name]["batch"]}
    out["order_full"] = results["full"]["order"]
    full_order = results["full"]["order"]
    for name in RANKED:
        if name not in results:
            continue
        rank = {m: i for i, m in enumerate(results[name]["order"])}
        tau = kendalltau(range(len(full_order)), [rank[m] for m in full_order]).statistic
        out[f"tau_{name}_vs_full"] = round(float(tau), 4)
        out[f"order_{name}"] = results[name]["order"]
    return out


def _sim_tournament(
    root: Path, questions: int, seed: int, way: dict[str, Any], judges: str = "alike"
) -> Path:
    """The benchmark's tournament on the embedded simulator (`type: sim`), for the ranking.

    `judges`: `alike` gives every judge the fake server's noise (0.8); `weaker_noisier`
    gives each judge noise 0.8 plus 0.8 per unit of skill below the best model's (the
    cheap models, which are also the weak ones here, judge with noise up to 2.9):
    the case where choosing judges by price could cost ranking accuracy.
    """
    root.mkdir(parents=True)
    (root / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i:03d}", "text": f"Question {i}."}) + "\n"
            for i in range(questions)
        )
    )
    server = _server_config(seed)["models"]
    models = {
        m: {
            "provider": "sim",
            # Answers' length does not enter a verdict (no length bias): short ones run faster.
            "sim": {k: v for k, v in server[m].items() if not k.startswith("answer_words")},
        }
        for m in MODELS
    }
    if judges == "weaker_noisier":
        best = max(skill for _, skill in MODELS.values())
        for m, (_, skill) in MODELS.items():
            models[m]["sim"]["judge_noise"] = round(0.8 + 0.8 * (best - skill), 3)
    cfg: dict[str, Any] = {
        "name": "bench-cost-ranking",
        "seed": seed,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim"}},
        "models": models,
        "contestants": list(MODELS),
        "review": {},
        # Each model at its batch list price: what `reviewers: per_dollar` weighs.
        "prices": {m: _batch_price(m) for m in MODELS},
    }
    return _write_tournament(root, cfg, way)


def _batch_price(model: str) -> dict[str, float]:
    price = library_price(model, MODELS[model][0], None)
    assert price is not None and price.batch is not None
    return {"input": price.batch.input, "output": price.batch.output}


def _ranking_at_shape(questions: int, seeds: list[int], judges: str = "alike") -> dict[str, Any]:
    """Kendall tau of the sampled designs (`RANKED`) against `full` at `questions` questions.

    Batch mode and the prompt cache change what a call costs, not its verdict;
    the ranking depends on the design alone. So the bigger designs run on
    the embedded simulator (the fake server's models and reviewer settings, the
    same templates and sampling), directly, which takes minutes where the
    fake server would take hours.
    """
    out: dict[str, Any] = {"questions": questions, "seeds": seeds, "judges": judges}
    taus: dict[str, list[float]] = {name: [] for name in RANKED}
    truth: dict[str, list[float]] = {name: [] for name in ("full", *RANKED)}
    true_order = sorted(MODELS, key=lambda m: -MODELS[m][1])
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            orders: dict[str, list[str]] = {}
            for name in ("full", *RANKED):
                root = Path(tmp) / f"{name}-{seed}"
                path = _sim_tournament(root, questions, seed, WAYS[name], judges)
                command = [sys.executable, "-m", "arena", "run", str(path), "--json"]
                done = subprocess.run(command, capture_output=True, text=True, env=_env())
                if done.returncode != 0:
                    raise SystemExit(
                        f"sim {name}: arena run exited {done.returncode}: {done.stderr[-2000:]}"
                    )
                orders[name] = _order(path.parent / "out")
            full = orders["full"]
            for name in ("full", *RANKED):
                rank = {m: i for i, m in enumerate(orders[name])}
                tau_true = kendalltau(range(len(true_order)), [rank[m] for m in true_order])
                truth[name].append(round(float(tau_true.statistic), 4))
                if name != "full":
                    tau = kendalltau(range(len(full)), [rank[m] for m in full]).statistic
                    taus[name].append(round(float(tau), 4))
            print(
                f"ranking at {questions} questions, seed {seed}: {taus}",
                file=sys.stderr,
                flush=True,
            )
    for name, values in taus.items():
        out[f"tau_{name}_vs_full"] = values
        out[f"tau_{name}_vs_full_mean"] = round(float(sum(values) / len(values)), 4)
    out["tau_vs_true"] = truth
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=QUESTIONS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ways", default=",".join(WAYS), help="which ways to run (comma list)")
    parser.add_argument(
        "--ranking-questions",
        type=int,
        default=0,
        help="also rank the full and sampled designs of this many questions on the simulator",
    )
    parser.add_argument("--ranking-seeds", type=int, default=3)
    parser.add_argument("--ranking-only", action="store_true", help="skip the cost runs")
    parser.add_argument(
        "--judges",
        choices=("alike", "weaker_noisier"),
        default="alike",
        help="the ranking runs' judges: all with noise 0.8, or the weaker ones noisier",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"the first {SMOKE_MODELS} models on {SMOKE_QUESTIONS} questions: a check, no figure",
    )
    args = parser.parse_args()
    models = list(MODELS)[:SMOKE_MODELS] if args.smoke else list(MODELS)
    questions = SMOKE_QUESTIONS if args.smoke else args.questions
    if args.ranking_only:
        seeds = list(range(args.seed, args.seed + args.ranking_seeds))
        print(
            json.dumps(
                _ranking_at_shape(args.ranking_questions or RANKING_QUESTIONS, seeds, args.judges),
                indent=2,
            )
        )
        return
    names = [w for w in args.ways.split(",") if w]
    if "full" not in names:
        names.insert(0, "full")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            results[name] = _run_way(Path(tmp) / name, name, questions, args.seed, models)
            print(f"{name}: {results[name]['seconds']:.0f} s", file=sys.stderr, flush=True)
    summary = _summary(results, models)
    # Every figure is what this tournament cost: nothing is extrapolated.
    summary = {"questions_run": questions, "models": len(models), "scale": 1.0, **summary}
    summary["checks"] = _checks(summary)
    if args.ranking_questions:
        seeds = list(range(args.seed, args.seed + args.ranking_seeds))
        summary["ranking_at_shape"] = _ranking_at_shape(args.ranking_questions, seeds, args.judges)
    print(json.dumps(summary, indent=2))


def _checks(summary: dict[str, Any]) -> dict[str, bool]:
    """The figures the docs hold this benchmark to (docs/cost.md), each true or false."""
    checks: dict[str, bool] = {"scale_1": summary["scale"] == 1.0}
    if "cost_cache_bound" in summary:
        checks["cached_within_1.1_of_bound"] = (
            summary["cost_cached"] <= 1.1 * summary["cost_cache_bound"]
        )
    if "ratio_cached_prompts" in summary:
        checks["cache_layout_never_costs_more"] = all(
            r <= 1.0 for r in summary["ratio_cached_prompts"].values()
        )
    if "ratio_all" in summary:
        checks["all_levers_within_5pct"] = summary["ratio_all"] <= 0.05
    if "tau_all_vs_full" in summary:
        checks["tau_all_at_least_0.9"] = summary["tau_all_vs_full"] >= 0.9
    return checks


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def _missing() -> list[str]:
    """What this benchmark needs and this machine lacks: the fake server and the provider SDKs."""
    return [
        m
        for m in (
            "aiohttp",
            "openai",
            "anthropic",
            "google.genai",
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
