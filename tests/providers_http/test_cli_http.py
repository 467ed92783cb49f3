"""`arena run` and `arena plan` over HTTP: three APIs, budget, kill -9, bad input, key leaks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.fakeserver import FakeServer
from arena.store import RunLog
from tests.providers_http.conftest import (
    CANARY,
    KEY_ENV,
    KEYS,
    TYPES,
    base_url,
    set_keys,
    write_tournament,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

PRICES = {
    "alpha": {"input": 100.0, "output": 200.0},
    "beta": {"input": 50.0, "output": 100.0},
    "gamma": {"input": 10.0, "output": 20.0},
}


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _summary(result: Result) -> dict[str, Any]:
    assert result.stdout.strip(), result.output
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def _calls(out: Path) -> pl.DataFrame:
    log = RunLog(out)
    cols = ["id", "status", "error", "provider", "cost_usd", "tokens_in", "tokens_out", "run_id"]
    return pl.concat([log.read("answers").select(cols), log.read("reviews").select(cols)])


def test_mixed_tournament_over_http_with_plan_costs_and_logged_costs(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch)
    path = write_tournament(tmp_path, server, extra={"prices": PRICES})
    plan = json.loads(_arena("plan", str(path), "--json").stdout)
    assert {r["provider"] for r in plan["rows"]} == {f"p_{t}" for t in TYPES}
    assert all(r["est_cost_usd"] > 0 for r in plan["rows"]) and plan["unpriced"] == []
    assert plan["total"]["est_cost_usd"] == pytest.approx(
        sum(r["est_cost_usd"] for r in plan["rows"])
    )

    result = _arena("run", str(path), "--json")
    summary = _summary(result)
    assert result.exit_code == 0, result.output
    assert summary["completed"] + summary["invalid"] == summary["planned"] == 9 + 54
    calls = _calls(tmp_path / "out")
    assert calls.height == 63 and (calls["status"] != "failed").all()
    assert (calls["cost_usd"] > 0).all() and (calls["tokens_out"] > 0).all()
    assert calls["cost_usd"].sum() == pytest.approx(summary["spent_usd"])
    # The plan's estimate is an upper bound of what was spent.
    assert summary["spent_usd"] <= plan["total"]["est_cost_usd"]
    assert set(calls["provider"].unique()) == {f"p_{t}" for t in TYPES}
    again = json.loads(_arena("plan", str(path), "--json").stdout)
    assert again["total"]["pending"] == 0 and again["total"]["est_cost_usd"] == 0


def test_budget_stops_the_run_with_exit_4_and_a_larger_budget_finishes_it(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch)
    path = write_tournament(tmp_path, server, extra={"prices": PRICES})
    budget = 0.5
    result = _arena("run", str(path), "--json", "--budget", str(budget))
    summary = _summary(result)
    assert result.exit_code == 4, result.output
    assert summary["budget_stopped"] and summary["pending"] > 0
    spent = _calls(tmp_path / "out")["cost_usd"].sum()
    assert 0 < spent <= budget
    assert summary["spent_usd"] == pytest.approx(spent)

    resumed = _arena("run", str(path), "--json", "--budget", "1000")
    second = _summary(resumed)
    assert resumed.exit_code == 0, resumed.output
    assert second["skipped"] == summary["completed"] + summary["invalid"]
    assert _calls(tmp_path / "out").height == second["planned"]


def test_missing_keys_are_all_listed_and_nothing_is_called(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for t in TYPES:
        monkeypatch.delenv(KEY_ENV[t], raising=False)
    path = write_tournament(tmp_path, server)
    before = server.stats()["counts"].get("requests", 0)
    result = _arena("run", str(path))
    assert result.exit_code == 2
    for t in TYPES:
        assert f"providers.p_{t}: no API key" in result.stderr
        assert KEY_ENV[t] in result.stderr
    assert server.stats()["counts"].get("requests", 0) == before
    assert not (tmp_path / "out" / "log").exists()


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ({"type": "mistral"}, "unknown provider type 'mistral'"),
        (
            {"type": "openai", "base_url": "localhost:8000/v1", "api_key_env": KEY_ENV["openai"]},
            "providers.p.base_url: 'localhost:8000/v1' is not an http(s) URL",
        ),
    ],
)
def test_unknown_type_and_bad_base_url_exit_2(
    tmp_path: Path,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    provider: dict[str, Any],
    message: str,
) -> None:
    set_keys(monkeypatch)
    path = write_tournament(
        tmp_path, server, providers={"p": provider}, models={"alpha": "p", "beta": "p"}
    )
    result = _arena("run", str(path))
    assert result.exit_code == 2
    assert message in result.stderr


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    return env


def _journal_rows(out: Path) -> int:
    log = out / "log"
    return sum(f.read_bytes().count(b"\n") for f in log.glob("*.jsonl")) if log.exists() else 0


@pytest.mark.slow
def test_kill_9_then_resume_over_http_equals_an_uninterrupted_run(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch)
    slow = {"slow_a": "p_openai", "slow_b": "p_anthropic", "slow_c": "p_gemini"}
    providers = {
        f"p_{t}": {
            "type": t,
            "base_url": base_url(server, t),
            "api_key_env": KEY_ENV[t],
            "limits": {"max_concurrency": 1},
        }
        for t in TYPES
    }
    ref_dir, kill_dir = tmp_path / "ref", tmp_path / "kill"
    ref_dir.mkdir()
    kill_dir.mkdir()
    ref = write_tournament(ref_dir, server, models=slow, providers=providers, questions=4)
    killed = write_tournament(kill_dir, server, models=slow, providers=providers, questions=4)
    assert _arena("run", str(ref), "--json").exit_code == 0

    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(killed), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_subprocess_env(),
    )
    deadline = time.monotonic() + 60
    while _journal_rows(kill_dir / "out") < 20:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _calls(kill_dir / "out")
    assert 0 < before.height < 12 + 72

    result = _arena("run", str(killed), "--json")
    resumed = _summary(result)
    assert result.exit_code == 0, result.output
    assert resumed["skipped"] == before.height
    after, expected = RunLog(kill_dir / "out"), RunLog(ref_dir / "out")
    cols = ["id", "status", "verdict", "text"]
    assert (
        after.read("reviews")
        .sort("id")
        .select(cols)
        .equals(expected.read("reviews").sort("id").select(cols))
    )
    assert (
        after.read("answers")
        .sort("id")
        .select("id", "answer_turns")
        .equals(expected.read("answers").sort("id").select("id", "answer_turns"))
    )
    # Nothing logged before the kill was paid for again.
    redone = (
        _calls(kill_dir / "out")
        .join(before.select("id", "run_id"), on="id")
        .filter(pl.col("run_id") != pl.col("run_id_right"))
    )
    assert redone.height == 0


@pytest.mark.slow
def test_auth_failure_gives_one_message_and_the_key_never_leaks(
    tmp_path: Path, server: FakeServer
) -> None:
    path = write_tournament(tmp_path, server)
    env = _subprocess_env()
    env[KEY_ENV["anthropic"]] = CANARY  # rejected by the server
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count("authentication failed") == 1, proc.stderr
    calls = _calls(tmp_path / "out")
    dead = calls.filter(pl.col("provider") == "p_anthropic")
    assert dead.height > 0 and (dead["status"] == "failed").all()
    assert dead["error"].n_unique() == 1
    assert "authentication failed" in dead["error"][0]
    assert (calls.filter(pl.col("provider") != "p_anthropic")["status"] != "failed").all()
    assert CANARY not in proc.stdout and CANARY not in proc.stderr
    for file in (tmp_path / "out").rglob("*"):
        if file.is_file():
            assert CANARY.encode() not in file.read_bytes(), file


def test_a_run_logs_cached_tokens_the_provider_reports(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena run` keeps each call's cache-read tokens from the SDK's usage in the log."""
    set_keys(monkeypatch)
    models = {"long_a": "p_openai", "long_b": "p_openai", "long_c": "p_openai"}
    path = write_tournament(
        tmp_path,
        server,
        models=models,
        questions=2,
        extra={
            "review": {"max_tokens": 200, "template": "cache_friendly"},
            "models": {name: {"provider": p, "max_tokens": 2000} for name, p in models.items()},
        },
    )
    result = _arena("run", str(path), "--json")
    assert result.exit_code == 0, result.output
    reviews = RunLog(tmp_path / "out").read("reviews")
    assert reviews.height == 2 * 6 * 3
    cached = reviews["tokens_cache_read"].fill_null(0)
    # A reviewer's reviews of (a, b) and (a, c) on one question share the template,
    # the question and answer a: over 1,024 tokens, so the second one reads the cache.
    assert int(cached.sum()) > 0
    assert (cached <= reviews["tokens_in"]).all()
