"""kill -9 batch-mode runs, resume them in the ways that once paid twice, count what was billed.

A three-contestant tournament (3 questions: 9 answers and 54 reviews, 63
calls) on the fake server's three batch APIs (OpenAI, Anthropic, Gemini),
each trial on a server of its own. After the runs of a trial the server works
through every job it accepted (POST /fake/batch/finish: a real API runs every
accepted job whether anyone looks again or not), so `billed` counts every
request a provider would charge. The trials:

- `random_kills`: a batch-mode run killed with SIGKILL `--kills` times once
  its log grew by a random number of rows (some between a job's intent row
  and its job id), then resumed to the end; its reviews and leaderboard are
  compared with an uninterrupted run's;
- `limit`: killed once its 3 answer jobs are submitted, then `--limit 1`, then
  a full run;
- `budget`: killed once 9 jobs (51 requests) are submitted, then a run stopped
  by `--budget` after a few reviews, then a full run;
- `no_batch`: `--batch` killed once its answer jobs are submitted, then a run
  without batch mode;
- `renamed`: killed once its answer jobs are submitted, then a run with the
  OpenAI provider entry renamed.

Prints JSON: trials, billed (requests the server billed), logged (calls in
the logs, distinct), paid_twice (billed beyond the logged calls), lost (calls
of the plan not in the log at the end), then per trial.

    python benchmarks/bench_batch_kill.py [--repeats 3] [--kills 12] [--seed 1] [--smoke]
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
from collections.abc import Callable
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
QUESTIONS = 3
CALLS = 3 * QUESTIONS + 18 * QUESTIONS  # answers, reviews (every ordered pair, every reviewer)
BATCH = {"max_requests": 7, "max_wait": 0.05, "poll_seconds": 0.02}
PRICES = {
    m: {"input": 100.0, "output": 200.0, "batch": {"input": 50.0, "output": 100.0}} for m in MODELS
}


def _server(seed: int) -> FakeServer:
    return FakeServer(
        FakeServerConfig.model_validate(
            {
                "seed": seed,
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


def _post(server: FakeServer, path: str, body: dict[str, Any]) -> None:
    req = urllib.request.Request(
        server.url + path, json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(req, timeout=10).read()


class _Clock:
    """Moves the server's clock on in the background: jobs end within seconds."""

    def __init__(self, server: FakeServer) -> None:
        self.server, self.stop = server, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.02):
            _post(self.server, "/fake/clock", {"advance": 5.0})

    def __enter__(self) -> _Clock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _tournament(root: Path, server: FakeServer, batch: Any) -> Path:
    root.mkdir(parents=True)
    (root / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "text": f"Question {i}?"}) + "\n" for i in range(QUESTIONS)
        )
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
                "batch": batch,
            }
            for t in TYPES
        },
        "models": {m: {"provider": f"p_{t}", "max_tokens": 200} for m, t in MODELS.items()},
        "contestants": list(MODELS),
        "review": {"max_tokens": 200},
        "prices": PRICES,
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


def _intents(out: Path) -> tuple[set[str], set[str]]:
    """Intent ids of the journal: all, and those with a job id (submitted)."""
    intents, submitted = set(), set()
    for line in _journal(out):
        if b'"custom_ids"' not in line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        row = row.get("row", row)
        intents.add(row.get("id"))
        if row.get("job_id"):
            submitted.add(row.get("id"))
    return intents, submitted


def _start(path: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--json", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )


def _run(path: Path, *args: str) -> int:
    return _start(path, *args).wait()


def _kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> bool:
    """kill -9 the run once `ready()`; False when it ended first."""
    deadline = time.monotonic() + 300
    while proc.poll() is None and not ready():
        if time.monotonic() > deadline:
            raise RuntimeError("the run neither ended nor reached the kill point in 300 s")
        time.sleep(0.005)
    hit = proc.poll() is None
    if hit:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return hit


def _kill_after_jobs(
    path: Path, jobs: int, *args: str, finish_first: tuple[FakeServer, int] | None = None
) -> None:
    """Kill the run once `jobs` jobs are submitted (`finish_first`: the server finishes the
    jobs submitted once that many are, so the run goes on to its reviews)."""
    out = path.parent / "out"
    pending = [finish_first]

    def ready() -> bool:
        submitted = len(_intents(out)[1])
        if pending[0] is not None and submitted >= pending[0][1]:
            _post(pending[0][0], "/fake/batch/finish", {})
            pending[0] = None
        return submitted >= jobs

    if not _kill_when(_start(path, *args), ready):
        raise RuntimeError(f"the run ended before {jobs} jobs were submitted")


def _count(server: FakeServer, out: Path) -> dict[str, Any]:
    """What the server billed once every job ran, and what the log holds."""
    _post(server, "/fake/batch/finish", {})
    billed = int(server.stats()["counts"].get("billed", 0))
    log = RunLog(out)
    calls = pl.concat([log.read("answers").select("id"), log.read("reviews").select("id")])
    logged = calls["id"].n_unique()
    open_jobs = log.read(BATCH_TABLE).filter(pl.col("state").is_in(["intent", "submitted"]))
    return {
        "billed": billed,
        "logged": logged,
        "paid_twice": max(0, billed - logged),
        "lost": CALLS - logged,
        "jobs_left_open": open_jobs.height,
    }


def _limit(root: Path, server: FakeServer, rng: random.Random) -> dict[str, Any]:
    path = _tournament(root, server, BATCH)
    _kill_after_jobs(path, 3)
    with _Clock(server):
        codes = [_run(path, "--limit", "1"), _run(path)]
    return {"exit_codes": codes}


def _budget(root: Path, server: FakeServer, rng: random.Random) -> dict[str, Any]:
    path = _tournament(root, server, BATCH)
    _kill_after_jobs(path, 9, finish_first=(server, 3))
    with _Clock(server):
        codes = [_run(path, "--budget", "0.1"), _run(path)]
    return {"exit_codes": codes}


def _no_batch(root: Path, server: FakeServer, rng: random.Random) -> dict[str, Any]:
    path = _tournament(root, server, False)
    _kill_after_jobs(path, 3, "--batch")
    _post(server, "/fake/batch/finish", {})  # the jobs ended while nobody ran
    return {"exit_codes": [_run(path)]}


def _renamed(root: Path, server: FakeServer, rng: random.Random) -> dict[str, Any]:
    path = _tournament(root, server, BATCH)
    _kill_after_jobs(path, 3)
    cfg = yaml.safe_load(path.read_text())
    cfg["providers"]["renamed"] = cfg["providers"].pop("p_openai")
    cfg["models"]["alpha"]["provider"] = "renamed"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    with _Clock(server):
        return {"exit_codes": [_run(path)]}


def _reviews(out: Path) -> pl.DataFrame:
    return RunLog(out).read("reviews").sort("id").select("id", "status", "verdict", "text")


def _board(out: Path) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(out), "--format", "json"],
        capture_output=True,
        check=True,
        env=_env(),
    )
    return [(r["model"], r["bt"]) for r in json.loads(done.stdout)["models"]]


def _random_kills(
    root: Path, server: FakeServer, seed: int, rng: random.Random, kills: int
) -> dict[str, Any]:
    """Killed at random moments, resumed; compared with an uninterrupted run on a server
    of the same seed."""
    with _server(seed) as ref_server, _Clock(ref_server):
        ref = _tournament(root / "ref", ref_server, BATCH)
        _run(ref)
    path = _tournament(root / "kill", server, BATCH)
    out = path.parent / "out"
    hits = during_submission = 0
    with _Clock(server):
        for _ in range(kills):
            target = rng.randint(0, 60)

            def ready(target: int = target) -> bool:
                intents, submitted = _intents(out)
                if intents - submitted and rng.random() < 0.2:
                    return True  # between an intent row and its job id
                return len(_journal(out)) >= target

            if _kill_when(_start(path), ready):
                hits += 1
                intents, submitted = _intents(out)
                during_submission += bool(intents - submitted)
        code = _run(path)
    return {
        "kills": kills,
        "kills_hitting_a_run": hits,
        "kills_with_an_intent_not_yet_submitted": during_submission,
        "exit_codes": [code],
        "reviews_equal_uninterrupted": _reviews(out).equals(_reviews(ref.parent / "out")),
        "leaderboard_equal_uninterrupted": _board(out) == _board(ref.parent / "out"),
    }


def server_seed(rng: random.Random) -> int:
    return rng.randint(1, 10**6)


SEQUENCES = {"limit": _limit, "budget": _budget, "no_batch": _no_batch, "renamed": _renamed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="trials of each sequence")
    parser.add_argument("--kills", type=int, default=12, help="kills of the random_kills trial")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="one trial each, 2 random kills")
    args = parser.parse_args()
    repeats, kills = (1, 2) if args.smoke else (args.repeats, args.kills)
    rng = random.Random(args.seed)
    trials: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        plan = [name for _ in range(repeats) for name in SEQUENCES] + ["random_kills"]
        for n, name in enumerate(plan):
            root = Path(tmp) / f"{n}-{name}"
            seed = server_seed(rng)
            start = time.monotonic()
            with _server(seed) as server:
                if name == "random_kills":
                    root.mkdir()
                    detail = _random_kills(root, server, seed, rng, kills)
                    out = root / "kill" / "out"
                else:
                    detail = SEQUENCES[name](root, server, rng)
                    out = root / "out"
                counted = _count(server, out)
            seconds = round(time.monotonic() - start, 1)
            trials.append({"trial": name, "server_seed": seed, **counted, **detail, "s": seconds})
    totals = {k: sum(t[k] for t in trials) for k in ("billed", "logged", "paid_twice", "lost")}
    print(json.dumps({"trials": len(trials), **totals, "by_trial": trials}, indent=2))


if __name__ == "__main__":
    main()
