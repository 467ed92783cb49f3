"""Batch mode over the fake server: batch prices, adoption after kill -9, no double billing."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.scheduler import BATCH_TABLE
from arena.store import RunLog
from tests.providers_http.conftest import (
    KEY_ENV,
    KEYS,
    TYPES,
    FakeClock,
    base_url,
    write_tournament,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

MODELS = {"alpha": "p_openai", "beta": "p_anthropic", "gamma": "p_gemini"}
PRICES = {
    "alpha": {"input": 100.0, "output": 200.0, "batch": {"input": 50.0, "output": 100.0}},
    "beta": {"input": 50.0, "output": 100.0, "batch": {"input": 25.0, "output": 50.0}},
    "gamma": {"input": 10.0, "output": 20.0, "batch": {"input": 5.0, "output": 10.0}},
}


def _config(delay: float) -> FakeServerConfig:
    return FakeServerConfig.model_validate(
        {
            "seed": 5,
            "keys": list(KEYS.values()),
            "batch": {"delay_seconds": delay},
            "models": {
                "alpha": {"skill": 2.0, "answer_words": 20},
                "beta": {"skill": 0.5, "answer_words": 20},
                "gamma": {"skill": -1.0, "answer_words": 20},
            },
        }
    )


@pytest.fixture
def fresh() -> Iterator[FakeServer]:
    """A server of our own: its counters see only this test's requests."""
    with FakeServer(_config(0.0)) as s:
        yield s


def _providers(server: FakeServer, batch: Any) -> dict[str, dict[str, Any]]:
    return {
        f"p_{t}": {
            "type": t,
            "base_url": base_url(server, t),
            "api_key_env": KEY_ENV[t],
            "limits": {"max_concurrency": 4},
            "timeout": 5,
            "batch": batch,
        }
        for t in TYPES
    }


BATCH = {"max_requests": 7, "max_wait": 0.05, "poll_seconds": 0.02}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    return env


def _calls(out: Path) -> pl.DataFrame:
    log = RunLog(out)
    cols = ["id", "status", "cost_usd", "tokens_in", "tokens_out"]
    return pl.concat([log.read("answers").select(cols), log.read("reviews").select(cols)])


def _run(path: Path) -> dict[str, Any]:
    result = CliRunner(env=_env()).invoke(main, ["run", str(path), "--json"])
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def test_batch_mode_runs_every_call_as_jobs_at_batch_prices(
    tmp_path: Path, fresh: FakeServer
) -> None:
    path = write_tournament(
        tmp_path,
        fresh,
        models=MODELS,
        providers=_providers(fresh, BATCH),
        extra={"prices": PRICES},
    )
    plan = json.loads(CliRunner(env=_env()).invoke(main, ["plan", str(path), "--json"]).stdout)
    summary = _run(path)
    assert summary["completed"] + summary["invalid"] == summary["planned"] == 9 + 54
    calls = _calls(tmp_path / "out")
    counts = fresh.stats()["counts"]
    # Every request went out as a batch line, once; none directly.
    lines = sum(counts.get(f"{t}.batch.lines", 0) for t in TYPES)
    assert lines == counts["billed"] == calls.height == 63
    jobs = RunLog(tmp_path / "out").read(BATCH_TABLE)
    assert set(jobs["state"]) == {"collected"} and jobs["job_id"].null_count() == 0
    assert sum(len(json.loads(c)) for c in jobs["custom_ids"]) == 63
    assert all(len(json.loads(c)) <= 7 for c in jobs["custom_ids"])
    # Priced at the batch prices: half of the list prices of the tokens billed.
    alpha = calls.filter(pl.col("id").is_in(_ids_of(tmp_path / "out", "alpha")))
    expected = (alpha["tokens_in"] * 50.0 + alpha["tokens_out"] * 100.0) / 1e6
    assert alpha["cost_usd"].to_list() == pytest.approx(expected.to_list())
    assert summary["spent_usd"] <= plan["total"]["est_cost_usd"]
    # The summary's token totals are the logged calls' (cache and reasoning counts too).
    assert summary["tokens"]["in"] == calls["tokens_in"].sum()
    assert summary["tokens"]["out"] == calls["tokens_out"].sum()
    assert set(summary["tokens"]) == {"in", "cache_read", "cache_write", "out", "reasoning"}
    # `arena status` lists jobs in flight: none now, one after a submitted row is logged.
    status = CliRunner(env=_env()).invoke(main, ["status", str(tmp_path / "out"), "--json"])
    assert json.loads(status.stdout)["batch_jobs"] == []
    asyncio.run(_log_job_in_flight(tmp_path / "out"))
    status = CliRunner(env=_env()).invoke(main, ["status", str(tmp_path / "out"), "--json"])
    (job,) = json.loads(status.stdout)["batch_jobs"]
    assert job["job_id"] == "batch_x" and job["requests"] == 2 and job["age_seconds"] >= 600
    text = CliRunner(env=_env()).invoke(main, ["status", str(tmp_path / "out")]).output
    assert "batch jobs in flight: 1 (2 requests), oldest 10." in text


async def _log_job_in_flight(out: Path) -> None:
    async with RunLog(out).writer() as writer:
        await writer.write(
            BATCH_TABLE,
            {
                "id": "intent1",
                "provider": "p_openai",
                "model": "alpha",
                "state": "submitted",
                "job_id": "batch_x",
                "custom_ids": json.dumps(["a", "b"]),
                "tags": "{}",
                "created_at": time.time() - 610,
                "updated_at": time.time(),
                "run_id": "r",
            },
        )


def _ids_of(out: Path, model: str) -> list[str]:
    log = RunLog(out)
    answers = log.read("answers").filter(pl.col("model") == model)["id"].to_list()
    reviews = log.read("reviews").filter(pl.col("reviewer") == model)["id"].to_list()
    return [*answers, *reviews]


def test_plan_prices_a_batch_provider_at_batch_prices(tmp_path: Path, fresh: FakeServer) -> None:
    direct = write_tournament(tmp_path, fresh, models=MODELS, extra={"prices": PRICES})
    runner = CliRunner(env=_env())
    full = json.loads(runner.invoke(main, ["plan", str(direct), "--json"]).stdout)
    (tmp_path / "b").mkdir()
    batched = write_tournament(
        tmp_path / "b",
        fresh,
        models=MODELS,
        providers=_providers(fresh, True),
        extra={"prices": PRICES},
    )
    half = json.loads(runner.invoke(main, ["plan", str(batched), "--json"]).stdout)
    assert half["total"]["est_cost_usd"] == pytest.approx(full["total"]["est_cost_usd"] / 2)


def test_batch_on_a_provider_without_a_batch_api_is_refused(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"id": "q0", "text": "Hi?"}\n')
    (tmp_path / "t.yaml").write_text(
        "name: t\nquestions: q.jsonl\nproviders:\n  s: {type: sim, batch: true}\n"
        "models:\n  a: {provider: s}\n  b: {provider: s}\ncontestants: [a, b]\n"
    )
    result = CliRunner().invoke(main, ["run", str(tmp_path / "t.yaml")])
    assert result.exit_code == 2
    assert "batch" in result.output and "sim" in result.output


def _journal_rows(out: Path) -> int:
    """Rows in the log's journals (a journal sealed and compacted meanwhile counts 0)."""
    rows = 0
    for f in (out / "log").glob("*.jsonl"):
        try:
            rows += f.read_bytes().count(b"\n")
        except FileNotFoundError:
            continue
    return rows


def kill_at_random(path: Path, out: Path, rng: random.Random, kills: int, most: int) -> int:
    """Run, and kill -9 each run once the log grew by a random number of rows (0: at once).

    Returns how many kills hit a run that had logged rows of its own (some of
    them between a job's intent row and its job id: during submission).
    """
    hits = 0
    for _ in range(kills):
        target = rng.randint(0, most)
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "run", str(path), "--json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and _journal_rows(out) < target:
            assert time.monotonic() < deadline
            time.sleep(0.002)
        if proc.poll() is None:
            hits += _journal_rows(out) > 0
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    return hits


@pytest.mark.slow
def test_kill_9_during_batch_runs_then_resume_bills_each_request_once(tmp_path: Path) -> None:
    ref_dir, kill_dir = tmp_path / "ref", tmp_path / "kill"
    ref_dir.mkdir()
    kill_dir.mkdir()
    with FakeServer(_config(600.0)) as ref_server, FakeClock(ref_server, 60.0):
        ref = write_tournament(
            ref_dir, ref_server, models=MODELS, providers=_providers(ref_server, BATCH)
        )
        _run(ref)
    with FakeServer(_config(600.0)) as server, FakeClock(server, 60.0):
        path = write_tournament(
            kill_dir, server, models=MODELS, providers=_providers(server, BATCH)
        )
        hits = kill_at_random(path, kill_dir / "out", random.Random(7), 5, 25)
        assert hits >= 3
        _run(path)
        counts = server.stats()["counts"]
    out = kill_dir / "out"
    calls = _calls(out)
    # Every billed request is in the log, none twice, nothing sent directly.
    assert calls.height == 63 and calls["id"].n_unique() == 63
    assert counts["billed"] == counts["requests"] == 63
    assert sum(counts.get(f"{t}.batch.lines", 0) for t in TYPES) == 63
    # Jobs the killed runs submitted were adopted by later runs, not sent again.
    jobs = RunLog(out).read(BATCH_TABLE)
    runs = {json.loads(t)["arena_run"] for t in jobs["tags"]}
    assert len(runs) >= 2 and set(jobs["state"]) <= {"collected", "void"}
    cols = ["id", "status", "verdict", "text"]
    after, expected = RunLog(out).read("reviews"), RunLog(ref_dir / "out").read("reviews")
    assert after.sort("id").select(cols).equals(expected.sort("id").select(cols))
    assert _board(out) == _board(ref_dir / "out")


def _board(out: Path) -> Any:
    result = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)
    return [(r["model"], r["bt"], r["wins"], r["losses"]) for r in board["models"]]
