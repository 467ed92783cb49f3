"""Benchmark of `arena view` on a large run: 20 models, 500 questions, every model reviewing.

Builds a synthetic run directory (tournament.json, the questions file with 8
categories, the answers, and 500 x 380 x 20 = 3.8M reviews written as log
parts by the store's own part writer, as a compacted run leaves them), then
times, on the viewer's data and over HTTP (the aiohttp app on 127.0.0.1):
  `load_seconds`: reading the log into the viewer (startup, and each reload);
  `unchanged_check_ms`: a request's check that the log did not change;
  `page_ms`: the first page, unfiltered (median of 20 requests over HTTP);
  `filtered_page_ms`: page 3 filtered by model, reviewer, verdict and category;
  `battle_ms`: one battle in full (question, answers, its 40 reviews);
  `max_rss_mb`: the process's peak memory.
The last line printed is the JSON summary.

Usage: python benchmarks/bench_viewer.py [--models N] [--questions N] [--reviewers N] [--smoke]
`--smoke`: 8 models, 16 questions, 8 reviewers (7,168 reviews): a check, no figure.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import resource
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import arena
from arena.store._files import Compactor, conform
from arena.viewer import BattleFilter, RunData, make_app

CATEGORIES = [
    "coding",
    "extraction",
    "humanities",
    "math",
    "reasoning",
    "roleplay",
    "stem",
    "writing",
]
CHUNK = 500_000


def build_run(root: Path, models: int, questions: int, reviewers: int) -> Path:
    """A run directory with every log row a finished tournament of this size would have."""
    names = [f"model-{i:02d}" for i in range(models)]
    judges = names[:reviewers]
    qids = [f"q{k}" for k in range(questions)]
    with (root / "questions.jsonl").open("w") as handle:
        for k, qid in enumerate(qids):
            category = CATEGORIES[k % len(CATEGORIES)]
            handle.write(json.dumps({"id": qid, "category": category, "text": f"Question {k}?"}))
            handle.write("\n")
    models_yaml = "".join(f"  {n}: {{provider: sim}}\n" for n in names)
    (root / "t.yaml").write_text(
        f"name: big\nquestions: questions.jsonl\nproviders:\n  sim: {{type: sim}}\n"
        f"models:\n{models_yaml}contestants: [{', '.join(names)}]\n"
        f"reviewers: [{', '.join(judges)}]\n"
    )
    run = root / "run"
    (run / "log").mkdir(parents=True)
    (run / "tournament.json").write_text(
        json.dumps(
            {
                "name": "big",
                "contestants": names,
                "reviewers": judges,
                "models": {},
                "config_path": str(root / "t.yaml"),
            }
        )
    )
    log = arena.open_log(run)
    parts = Compactor(log.log_dir)
    words = " ".join(["word"] * 150)
    answers = pl.DataFrame(
        {
            "id": [f"a-{q}-{m}" for q in qids for m in names],
            "status": "ok",
            "question_id": [q for q in qids for _ in names],
            "model": [m for _ in qids for m in names],
            "answer_turns": [[f"({m}) {words}"] for _ in qids for m in names],
        }
    )
    parts.write_part("answers", parts.next_key("answers"), conform(answers, "answers"))

    rng = np.random.default_rng(0)
    a, b = np.nonzero(~np.eye(models, dtype=bool))
    per_question = a.size * reviewers
    n = per_question * questions
    q_index = np.repeat(np.arange(questions), per_question)
    model_a = np.tile(np.repeat(a, reviewers), questions)
    model_b = np.tile(np.repeat(b, reviewers), questions)
    judge = np.tile(np.tile(np.arange(reviewers), a.size), questions)
    verdicts = np.array(["A", "B", "tie"])[rng.integers(0, 3, n)]
    name_array = np.array(names)
    qid_array = np.array(qids)
    for start in range(0, n, CHUNK):
        s = slice(start, min(n, start + CHUNK))
        q, ma, mb = qid_array[q_index[s]], name_array[model_a[s]], name_array[model_b[s]]
        v = verdicts[s]
        frame = pl.DataFrame(
            {
                "id": [f"r-{k}" for k in range(s.start, s.stop)],
                "status": "ok",
                "question_id": q,
                "model_a": ma,
                "model_b": mb,
                "reviewer": name_array[judge[s]],
                "answer_a_id": np.char.add(np.char.add(np.char.add("a-", q), "-"), ma),
                "answer_b_id": np.char.add(np.char.add(np.char.add("a-", q), "-"), mb),
                "text": np.char.add("Assistant A is better supported.\nVerdict: [[", v),
                "verdict": v,
            }
        ).with_columns(pl.col("text") + "]]")
        parts.write_part("reviews", parts.next_key("reviews"), conform(frame, "reviews"))
    return run


def _serve(data: RunData) -> tuple[str, asyncio.AbstractEventLoop, threading.Thread]:
    from aiohttp import web

    loop = asyncio.new_event_loop()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    runner = web.AppRunner(make_app(data), access_log=None)
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.SockSite(runner, sock).start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait()
    return f"http://127.0.0.1:{sock.getsockname()[1]}/", loop, thread


def _median_ms(url: str, repeats: int = 20) -> tuple[float, Any]:
    times, body = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as response:
            body = json.loads(response.read())
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="a small run: a check, no figure")
    args = parser.parse_args()
    if args.smoke:  # at least 8 models: the filtered page asks for model-03 and model-07
        args.models, args.questions, args.reviewers = 8, 16, 8
    with tempfile.TemporaryDirectory(prefix="bench-viewer-") as tmp:
        start = time.perf_counter()
        run = build_run(Path(tmp), args.models, args.questions, args.reviewers)
        build_seconds = time.perf_counter() - start

        start = time.perf_counter()
        data = RunData(run)
        load_seconds = time.perf_counter() - start
        reviews = data.reviews.height
        assert not data.notes, data.notes

        start = time.perf_counter()
        for _ in range(20):
            assert data.refresh() is False
        unchanged_ms = (time.perf_counter() - start) / 20 * 1000

        url, loop, thread = _serve(data)
        page_ms, page = _median_ms(url + "api/reviews")
        assert page["total"] == reviews
        query = "api/reviews?model=model-03&reviewer=model-07&verdict=tie&category=math&page=3"
        filtered_ms, filtered = _median_ms(url + query)
        assert all(r["verdict"] == "tie" and r["category"] == "math" for r in filtered["rows"])
        battle_ms, battle = _median_ms(url + "api/battle/" + page["rows"][0]["id"])
        assert len(battle["reviews"]) == 2 * args.reviewers
        expected = data.select(
            BattleFilter(model="model-03", reviewer="model-07", verdict="tie", category="math")
        ).height
        assert filtered["total"] == expected
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    summary = {
        "models": args.models,
        "questions": args.questions,
        "reviewers": args.reviewers,
        "reviews": reviews,
        "build_seconds": round(build_seconds, 2),
        "load_seconds": round(load_seconds, 2),
        "unchanged_check_ms": round(unchanged_ms, 2),
        "page_ms": round(page_ms, 1),
        "filtered_page_ms": round(filtered_ms, 1),
        "battle_ms": round(battle_ms, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    print(
        f"{reviews} reviews: load {load_seconds:.2f} s, page {page_ms:.1f} ms, "
        f"filtered page {filtered_ms:.1f} ms, battle {battle_ms:.1f} ms"
    )
    print(json.dumps(summary))


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def _missing() -> list[str]:
    """What this benchmark needs and this machine lacks: aiohttp (the viewer's server)."""
    return [m for m in ("aiohttp",) if not _installed(m)]


if __name__ == "__main__":
    if _missing():  # a machine without the extras: say why, and do not fail the smoke run
        print(
            f"skipped: needs {', '.join(_missing())} (pip install -e '.[providers]')",
            file=sys.stderr,
        )
        sys.exit(0)
    main()
