"""kill -9 a batch-mode run at random moments, resume it, and count what the provider billed.

A three-contestant tournament on the fake server's three batch APIs (OpenAI,
Anthropic, Gemini; 5 questions, 15 answers and 90 reviews) runs in batch
mode and is killed with SIGKILL `--kills` times (default 12) once its log
grew by a random number of rows, some of them between a job's intent row and
its job id (during submission), then resumed to the end. The fake server's
clock is moved forward in the background (POST /fake/clock), so jobs spread
over ten minutes of server time finish in seconds. Prints JSON: the kills,
those that hit a run while the journal held an intent row without a job id
(an upper bound of kills during submission: an earlier void intent counts too), the requests
the server billed, the calls in the log (distinct), and whether the reviews
and the leaderboard equal an uninterrupted run's.

    python benchmarks/bench_batch_kill.py [--kills 12] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
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

from arena.fakeserver import FakeServer, FakeServerConfig
from arena.scheduler import BATCH_TABLE
from arena.store import RunLog

TYPES = ("openai", "anthropic", "gemini")
KEYS = {t: f"bench-key-{t}" for t in TYPES}
ENV = {t: f"BENCH_{t.upper()}_KEY" for t in TYPES}
MODELS = {"alpha": "openai", "beta": "anthropic", "gamma": "gemini"}


def _server() -> FakeServer:
    return FakeServer(
        FakeServerConfig.model_validate(
            {
                "seed": 3,
                "keys": list(KEYS.values()),
                "batch": {"delay_seconds": 600.0},
                "models": {
                    "alpha": {"skill": 1.5, "answer_words": 30},
                    "beta": {"skill": 0.3, "answer_words": 30},
                    "gamma": {"skill": -0.8, "answer_words": 30},
                },
            }
        )
    )


def _clock(server: FakeServer, stop: threading.Event) -> None:
    while not stop.wait(0.02):
        req = urllib.request.Request(
            server.url + "/fake/clock",
            json.dumps({"advance": 5.0}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=5).read()


def _tournament(root: Path, server: FakeServer) -> Path:
    root.mkdir(parents=True)
    (root / "q.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "text": f"Question {i}?"}) + "\n" for i in range(5))
    )
    cfg: dict[str, Any] = {
        "name": "bench-batch",
        "seed": 2,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {
            f"p_{t}": {
                "type": t,
                "base_url": server.url + "/v1" if t == "openai" else server.url,
                "api_key_env": ENV[t],
                "timeout": 5,
                "batch": {"max_requests": 6, "max_wait": 0.05, "poll_seconds": 0.02},
            }
            for t in TYPES
        },
        "models": {m: {"provider": f"p_{t}", "max_tokens": 200} for m, t in MODELS.items()},
        "contestants": list(MODELS),
        "review": {"max_tokens": 200},
    }
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({ENV[t]: KEYS[t] for t in TYPES})
    return env


def _journal(out: Path) -> list[bytes]:
    lines: list[bytes] = []
    for f in (out / "log").glob("*.jsonl"):
        try:
            lines.extend(f.read_bytes().splitlines())
        except FileNotFoundError:
            continue
    return lines


def _submitting(out: Path) -> bool:
    """Whether the journal holds an intent row whose job id is not logged yet."""
    intents, submitted = set(), set()
    for line in _journal(out):
        if b'"custom_ids"' not in line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        row = row.get("row", row)
        if row.get("state") == "intent":
            intents.add(row.get("id"))
        elif row.get("job_id"):
            submitted.add(row.get("id"))
    return bool(intents - submitted)


def _run(path: Path, wait: bool = True) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    if wait:
        proc.wait()
    return proc


def _board(out: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(out), "--format", "json"],
        capture_output=True,
        check=True,
        env=_env(),
    )
    return [(r["model"], r["bt"]) for r in json.loads(done.stdout)["models"]]


def _reviews(out: Path) -> pl.DataFrame:
    return RunLog(out).read("reviews").sort("id").select("id", "status", "verdict", "text")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        stop = threading.Event()
        with _server() as ref_server:
            threading.Thread(target=_clock, args=(ref_server, stop), daemon=True).start()
            ref = _tournament(Path(tmp) / "ref", ref_server)
            _run(ref)
            stop.set()
        stop = threading.Event()
        with _server() as server:
            threading.Thread(target=_clock, args=(server, stop), daemon=True).start()
            path = _tournament(Path(tmp) / "kill", server)
            out = path.parent / "out"
            hits = during_submission = 0
            for _ in range(args.kills):
                target = rng.randint(0, 60)
                proc = _run(path, wait=False)
                while proc.poll() is None and len(_journal(out)) < target:
                    if _submitting(out) and rng.random() < 0.2:
                        break
                    time.sleep(0.002)
                if proc.poll() is None:
                    hits += 1
                    during_submission += _submitting(out)
                    proc.send_signal(signal.SIGKILL)
                proc.wait()
            final = _run(path)
            stop.set()
            counts = server.stats()["counts"]
        log = RunLog(out)
        calls = pl.concat([log.read("answers").select("id"), log.read("reviews").select("id")])
        jobs = log.read(BATCH_TABLE)
        print(
            json.dumps(
                {
                    "kills": args.kills,
                    "kills_hitting_a_run": hits,
                    "kills_with_an_intent_not_yet_submitted": during_submission,
                    "resume_exit_code": final.returncode,
                    "billed_requests": counts.get("billed", 0),
                    "batch_lines": sum(counts.get(f"{t}.batch.lines", 0) for t in TYPES),
                    "logged_calls": calls.height,
                    "distinct_logged_calls": calls["id"].n_unique(),
                    "jobs": jobs.height,
                    "jobs_void": int((jobs["state"] == "void").sum()),
                    "runs_submitting": len({json.loads(t)["arena_run"] for t in jobs["tags"]}),
                    "reviews_equal_uninterrupted": _reviews(out).equals(
                        _reviews(ref.parent / "out")
                    ),
                    "leaderboard_equal_uninterrupted": _board(out) == _board(ref.parent / "out"),
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
