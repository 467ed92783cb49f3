"""Fault tolerance over HTTP: a server with K slots, answers without usage, echoed keys."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import ProviderConfig, RetryConfig
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.providers import create_provider
from arena.providers._remote import RemoteProvider, redact_runs
from arena.scheduler import PriceTable, Scheduler
from arena.store import RunLog
from arena.types import GenerateRequest, Message
from tests.providers_http.conftest import KEY_ENV, KEYS, write_tournament

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


def test_server_with_two_slots_and_no_limits_in_the_yaml_completes_without_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = FakeServerConfig.model_validate(
        {
            "serve_concurrency": 2,
            "models": {
                name: {"skill": skill, "answer_words": 10, "latency_mean": 0.03}
                for name, skill in (("alpha", 1.0), ("beta", 0.0), ("gamma", -1.0))
            },
        }
    )
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    with FakeServer(config) as server:
        provider = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": KEY_ENV["openai"],
            "timeout": 0.6,
        }  # no `limits`
        yaml_file = write_tournament(
            tmp_path,
            server,
            providers={"local": provider},
            models={"alpha": "local", "beta": "local", "gamma": "local"},
            questions=2,
        )
        result = CliRunner().invoke(main, ["run", str(yaml_file), "--json"])
        stats = server.stats()
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert result.exit_code == 0, result.output
    assert summary["failed"] == 0 and summary["completed"] == 6 + 36
    assert stats["max_serving"] == 2  # the server really served two at a time
    # The default window (8) kept the queue short: without it all 36 reviews
    # would wait at once, longer than the 0.6 s timeout.
    assert stats["max_queued"] <= 8
    assert stats["counts"].get("status.200", 0) == 6 + 36


def _ask(provider_type: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY_ENV[provider_type], KEYS[provider_type])
    base = server.url + "/v1" if provider_type == "openai" else server.url
    config = ProviderConfig(type=provider_type, base_url=base, api_key_env=KEY_ENV[provider_type])
    provider = create_provider("local", config, {}, 0)
    prices = PriceTable({"m": (1.0, 2.0)})

    async def run() -> Any:
        sched = Scheduler({"local": provider}, {}, RetryConfig(), prices=prices)
        try:
            req = GenerateRequest(model="m", messages=(Message("user", "q" * 400),), max_tokens=50)
            return [await sched.call("local", req) for _ in range(2)]
        finally:
            await provider.close()

    return asyncio.run(run())


@pytest.mark.parametrize("provider_type", ["openai", "gemini"])
def test_answers_without_usage_are_estimated_priced_and_warned_once(
    provider_type: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = FakeServerConfig.model_validate(
        {"omit_usage": True, "models": {"m": {"answer_words": 30}}}
    )
    with FakeServer(config) as server, caplog.at_level(logging.WARNING):
        outcomes = _ask(provider_type, server, monkeypatch)
    for outcome in outcomes:
        assert outcome.ok
        assert outcome.usage.estimated and outcome.usage.input_tokens == 100
        assert outcome.usage.output_tokens == (len(outcome.result.text) + 3) // 4
        assert outcome.cost_usd > 0
    warned = [r for r in caplog.records if "reports no token usage" in r.getMessage()]
    assert len(warned) == 1


def test_any_eight_character_run_of_the_key_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-proj-0123456789abcdefghijKLMNOP"
    monkeypatch.setenv("TEST_REDACT_KEY", key)
    provider = create_provider(
        "p", ProviderConfig(type="openai", api_key_env="TEST_REDACT_KEY"), {}, 0
    )
    assert isinstance(provider, RemoteProvider)
    echoed = f"Incorrect API key provided: {key[:12]}...{key[-8:]}. Bad key {key}."
    text = provider.redact(echoed)
    assert text == "Incorrect API key provided: [redacted]...[redacted]. Bad key [redacted]."
    # Runs shorter than 8 characters are ordinary text.
    assert provider.redact("status sk-proj 404") == "status sk-proj 404"
    assert redact_runs("xx0123456789yy", "a0123456789b") == "xx[redacted]yy"


def test_a_partly_echoed_key_never_reaches_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ECHO-4f1c9a2b7d3e8f60"
    config = FakeServerConfig.model_validate({"keys": ["another-key"]})
    monkeypatch.setenv("TEST_ECHO_KEY", key)
    with FakeServer(config) as server:
        provider = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": "TEST_ECHO_KEY",
        }
        yaml_file = write_tournament(
            tmp_path, server, providers={"p": provider}, models={"alpha": "p", "beta": "p"}
        )
        # The fake server echoes the start and end of a wrong key, as OpenAI does.
        result = CliRunner().invoke(main, ["run", str(yaml_file), "--json"])
    assert result.exit_code == 3, result.output
    errors = RunLog(tmp_path / "out").read("answers")["error"].to_list()
    assert errors and all(e and "authentication" in e for e in errors)
    for text in [*errors, result.output]:
        for start in range(len(key) - 7):
            assert key[start : start + 8] not in text


def test_summary_and_status_explain_failures_per_provider_model_and_reason(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    monkeypatch.setenv("TEST_UNKNOWN_KEY", "key-that-the-server-does-not-know-1234")
    url = server.url + "/v1"
    providers = {
        "good": {"type": "openai", "base_url": url, "api_key_env": KEY_ENV["openai"]},
        "quota": {"type": "openai", "base_url": url, "api_key_env": KEY_ENV["openai"]},
        "badkey": {"type": "openai", "base_url": url, "api_key_env": "TEST_UNKNOWN_KEY"},
    }
    yaml_file = write_tournament(
        tmp_path,
        server,
        providers=providers,
        models={"alpha": "good", "no-such-model": "good", "beta": "badkey", "fquota": "quota"},
        questions=2,
    )
    run = CliRunner().invoke(main, ["run", str(yaml_file), "--json"])
    assert run.exit_code == 3, run.output
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    reasons = {(e["provider"], e["model"]): e for e in summary["errors"]}
    assert reasons[("good", "no-such-model")]["reason"] == "permanent (HTTP 404)"
    assert reasons[("good", "no-such-model")]["count"] == 2
    assert reasons[("badkey", "beta")]["reason"] == "authentication failed"
    deferred = reasons[("quota", "fquota")]
    assert deferred["reason"] == "deferred" and "retry hint" in deferred["sample"]
    status = CliRunner().invoke(main, ["status", str(tmp_path / "out"), "--json"])
    assert status.exit_code == 0, status.output
    errors = json.loads(status.stdout)["errors"]
    last_run = json.loads(status.stdout)["last_run"]  # a deferral leaves no row: kept here
    assert [e["model"] for e in last_run["errors"] if e["reason"] == "deferred"] == ["fquota"]
    by_model = {(e["provider"], e["model"]): e for e in errors if e["model"] != "alpha"}
    missing = by_model[("good", "no-such-model")]
    assert missing["reason"] == "permanent (HTTP 404)" and missing["count"] == 2
    assert "does not exist" in missing["sample"]
    auth = by_model[("badkey", "beta")]
    assert auth["reason"] == "authentication failed" and auth["count"] == 2
    assert "key-that" not in json.dumps(errors) + run.output
    text = CliRunner().invoke(main, ["status", str(tmp_path / "out")])
    assert "failed: 2 call(s) of no-such-model on good: permanent (HTTP 404)" in text.output
    assert "last run: 2 calls of fquota on quota: deferred" in text.output
    plain = CliRunner().invoke(main, ["run", str(yaml_file)])
    assert "on good: permanent (HTTP 404) (e.g. permanent (HTTP 404): The model" in plain.output


def test_cost_of_failed_attempts_stays_in_the_totals_after_retry_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # beta answers empty (billed for the prompt) three times per request, then well.
    config = FakeServerConfig.model_validate(
        {
            "models": {
                "alpha": {"answer_words": 10},
                "beta": {"answer_words": 10, "faults": {"empty": 1.0, "recover_after": 3}},
            }
        }
    )
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    with FakeServer(config) as server:
        provider = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": KEY_ENV["openai"],
        }
        yaml_file = write_tournament(
            tmp_path,
            server,
            providers={"p": provider},
            models={"alpha": "p", "beta": "p"},
            questions=1,
            extra={"prices": {m: {"input": 1000.0, "output": 1000.0} for m in ("alpha", "beta")}},
        )
        first = CliRunner().invoke(main, ["run", str(yaml_file), "--json"])
        assert first.exit_code == 3, first.output
        out = tmp_path / "out"
        failed_cost = RunLog(out).spent_usd() - sum(
            RunLog(out).read(t).filter(pl.col("status") != "failed")["cost_usd"].sum()
            for t in ("answers", "reviews")
        )
        assert failed_cost > 0  # the failed calls were billed
        # Beta's reviews first run with the retried answer, and fail the same way.
        retried = [CliRunner().invoke(main, ["retry-failed", str(out), "--json"]) for _ in "12"]
        assert [r.exit_code for r in retried] == [3, 0], retried[-1].output
    spent = sum(
        json.loads(r.stdout.strip().splitlines()[-1])["spent_usd"] for r in [first, *retried]
    )
    log = RunLog(out)
    assert set(log.read("answers")["status"]) == {"ok"}
    assert set(log.read("reviews")["status"]) == {"ok"}
    assert log.spent_usd() == pytest.approx(spent)
    status = json.loads(CliRunner().invoke(main, ["status", str(out), "--json"]).stdout)
    assert status["total"]["spent_usd"] == pytest.approx(spent)
    board = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert json.loads(board.stdout)["cost_usd"] == pytest.approx(spent)


def _two_turn_questions(root: Path, n: int) -> None:
    (root / "q.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "turns": [f"First part of question {i}?", "And then?"]})
            + "\n"
            for i in range(n)
        )
    )


def _logged_attempts(out: Path) -> int:
    log = RunLog(out)
    return sum(
        int(log.read_all(t, ["attempts", "started_at"])["attempts"].fill_null(0).sum())
        for t in ("answers", "reviews")
    )


@pytest.mark.slow
def test_budget_stops_and_sigints_lose_no_paid_turn_of_two_turn_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("alpha", "beta", "gamma")
    config = FakeServerConfig.model_validate(
        {"models": {m: {"answer_words": 15, "latency_mean": 0.03} for m in names}}
    )
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    window = 4
    with FakeServer(config) as server:
        provider = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": KEY_ENV["openai"],
            "limits": {"max_concurrency": window},
        }
        yaml_file = write_tournament(
            tmp_path,
            server,
            providers={"p": provider},
            models=dict.fromkeys(names, "p"),
            extra={"prices": {m: {"input": 100.0, "output": 100.0} for m in names}},
        )
        _two_turn_questions(tmp_path, 3)
        out = tmp_path / "out"
        for budget in ("0.05", "0.1"):  # each stops with turns paid and pending
            stopped = CliRunner().invoke(main, ["run", str(yaml_file), "--budget", budget])
            assert stopped.exit_code == 4, stopped.output
            assert "budget of" in stopped.output and "run again" in stopped.output
            assert "on p: budget reached" in stopped.output  # the summary's reason
        partial = RunLog(out).read("answers").filter(pl.col("status") == "partial")
        assert partial.height > 0  # first turns paid for and kept
        assert all(len(t) == 1 for t in partial["answer_turns"].to_list())
        first_turns = dict(zip(partial["id"], partial["answer_turns"].list.first(), strict=True))
        reviewed = RunLog(out).read("reviews").select("answer_a_id", "answer_b_id")
        assert not set(partial["id"]) & set(reviewed.to_series(0)) | set(reviewed.to_series(1))
        for _ in range(3):  # three runs stopped by SIGINT
            before = len(RunLog(out).ids("reviews"))
            proc = subprocess.Popen(
                [sys.executable, "-m", "arena", "run", str(yaml_file), "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 60
            while len(RunLog(out).ids("reviews")) < before + 2:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.02)
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
            assert proc.returncode == 130, stderr
            assert json.loads(stdout.strip().splitlines()[-1])["interrupted"]
        final = CliRunner().invoke(main, ["run", str(yaml_file), "--json"])
        assert final.exit_code == 0, final.output
        requests = server.stats()["counts"]["requests"]
    answers = RunLog(out).read("answers")
    assert set(answers["status"]) == {"ok"}
    assert all(len(t) == 2 for t in answers["answer_turns"].to_list())
    kept = dict(zip(answers["id"], answers["answer_turns"].list.first(), strict=True))
    assert all(kept[aid] == text for aid, text in first_turns.items())  # resumed, not redone
    # Every request the server saw is an attempt in the log, but at most one
    # concurrency window of calls cut short; and no paid turn was asked twice:
    # 9 answers of two turns and 54 reviews need 72 requests.
    assert 0 <= requests - _logged_attempts(out) <= window
    assert requests <= 9 * 2 + 54 + window


@pytest.mark.slow
@pytest.mark.parametrize("second_signal", [False, True])
def test_a_hanging_call_cannot_outlive_the_grace_period_or_a_second_signal(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, second_signal: bool
) -> None:
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    provider = {
        "type": "openai",
        "base_url": server.url + "/v1",
        "api_key_env": KEY_ENV["openai"],
        "timeout": 600,  # the client would wait ten minutes for the hanging server
    }
    yaml_file = write_tournament(
        tmp_path,
        server,
        providers={"p": provider, "h": provider},
        models={"alpha": "p", "fhang": "h"},
    )
    grace = "60" if second_signal else "0.5"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(yaml_file), "--json", "--grace", grace],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = tmp_path / "out"
    deadline = time.monotonic() + 60
    while len(RunLog(out).ids("answers")) < 3:  # alpha answered; fhang hangs
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    if second_signal:
        time.sleep(0.3)
        assert proc.poll() is None  # still waiting for the hanging calls
        proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)  # not 60 s of grace, not 600 of timeout
    assert proc.returncode == 130, stderr
    assert "waiting up to" in stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["interrupted"] and summary["pending"] > 0
    answers = RunLog(out).read("answers")
    assert sorted(answers["status"]) == ["ok"] * 3  # alpha's, logged; fhang's stay pending


def test_tournament_budget_counts_every_earlier_run_and_usage_estimates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    names = ("alpha", "beta")
    config = FakeServerConfig.model_validate(
        {"omit_usage": True, "models": {m: {"answer_words": 15} for m in names}}
    )
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    with FakeServer(config) as server:
        provider = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": KEY_ENV["openai"],
        }

        def tournament(budget_usd: float) -> Path:
            return write_tournament(
                tmp_path,
                server,
                providers={"local": provider},
                models=dict.fromkeys(names, "local"),
                extra={
                    "prices": {m: {"input": 100.0, "output": 100.0} for m in names},
                    "budget_usd": budget_usd,
                },
            )

        first = CliRunner().invoke(main, ["run", str(tournament(0.05))])
        assert first.exit_code == 4, first.output
        assert "tournament budget (budget_usd) of $0.0500 reached" in first.output
        assert "raise budget_usd" in first.output
        warned = [r for r in caplog.records if "reports no token usage" in r.getMessage()]
        assert len(warned) == 1 and "provider local" in warned[0].getMessage()
        out = tmp_path / "out"
        spent = RunLog(out).spent_usd()
        assert 0 < spent <= 0.05
        again = CliRunner().invoke(main, ["run", str(tournament(0.05)), "--budget", "10"])
        assert again.exit_code == 4, again.output  # the limit counts the first run's spend
        assert f"${spent:.4f} before this one" in again.output
        assert RunLog(out).spent_usd() <= 0.05
        status = CliRunner().invoke(main, ["status", str(out)])
        assert "last run: stopped by the budget" in status.output
        assert "on local: budget reached (e.g. tournament budget" in status.output
        more = CliRunner().invoke(main, ["run", str(tournament(5.0)), "--json"])
        assert more.exit_code == 0, more.output
    log = RunLog(tmp_path / "out")
    answers = log.read("answers")
    assert answers["usage_estimated"].to_list() == [True] * answers.height
    assert (answers["cost_usd"] > 0).all() and (answers["tokens_out"] > 0).all()
    assert log.spent_usd() <= 5.0


def test_batcheval_budget_prices_real_models(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.batcheval.test_cli import CONFIG, write_inputs

    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    config = {
        **CONFIG,
        "providers": {
            "p": {
                "type": "openai",
                "base_url": server.url + "/v1",
                "api_key_env": KEY_ENV["openai"],
            }
        },
        "models": {"judge": {"provider": "p", "model": "gpt-5", "max_tokens": 200}},
    }
    samples, cfg = write_inputs(tmp_path, config=config)
    args = ["batcheval", str(samples), "--config", str(cfg), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, [*args, "--budget", "0.001"])
    assert result.exit_code == 4, result.output  # gpt-5 is priced: the budget binds
    assert "budget of $0.0010 for this run reached" in result.output
