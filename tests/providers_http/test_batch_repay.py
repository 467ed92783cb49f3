"""Batch jobs left open by a killed run are paid once, whatever the next runs do.

Each test kills (SIGKILL) a batch-mode run once some jobs are submitted, lets
the fake server work through every job it accepted (as a real API does,
whether anyone looks again or not: POST /fake/batch/finish), runs the
tournament again in a way that once paid for requests twice (a `--limit`
run, a run stopped by its budget, a run without batch mode, a renamed
provider), then to the end, and counts what the server billed: each of the 63
calls (9 answers, 54 reviews) once, every one of them in the log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning"),
]

MODELS = {"alpha": "p_openai", "beta": "p_anthropic", "gamma": "p_gemini"}
BATCH = {"max_requests": 7, "max_wait": 0.05, "poll_seconds": 0.02}
PRICES = {
    m: {"input": 100.0, "output": 200.0, "batch": {"input": 50.0, "output": 100.0}} for m in MODELS
}
CALLS = 9 + 54


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """Jobs take 600 s of server time: they end only when the clock is moved."""
    config = FakeServerConfig.model_validate(
        {
            "seed": 5,
            "keys": list(KEYS.values()),
            "batch": {"delay_seconds": 600.0},
            "models": {
                "alpha": {"skill": 2.0, "answer_words": 20},
                "beta": {"skill": 0.5, "answer_words": 20},
                "gamma": {"skill": -1.0, "answer_words": 20},
            },
        }
    )
    with FakeServer(config) as s:
        yield s


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    return env


def _tournament(root: Path, server: FakeServer, batch: Any) -> Path:
    providers = {
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
    return write_tournament(
        root, server, models=MODELS, providers=providers, extra={"prices": PRICES}
    )


def _jobs_submitted(out: Path) -> int:
    """Intents of the live journal with a job id (a job the provider accepted)."""
    path = out / "log" / f"{BATCH_TABLE}.journal.jsonl"
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return 0
    ids = set()
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line being written
        row = row.get("row", row)
        if row.get("job_id"):
            ids.add(row.get("id"))
    return len(ids)


def _kill_after_jobs(
    path: Path, jobs: int, *args: str, server: FakeServer | None = None, finish_at: int = 0
) -> None:
    """Run in batch mode and kill -9 the run once `jobs` jobs are submitted (with
    `finish_at`: the server finishes the first jobs once that many are submitted)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--json", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    deadline = time.monotonic() + 120
    try:
        while (submitted := _jobs_submitted(path.parent / "out")) < jobs:
            if server is not None and submitted >= finish_at:
                _finish_jobs(server)
                server = None
            assert proc.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _finish_jobs(server: FakeServer) -> None:
    """Every job the server accepted runs to its end (and is billed), as a real API's would."""
    req = urllib.request.Request(server.url + "/fake/batch/finish", b"{}", method="POST")
    urllib.request.urlopen(req, timeout=10).read()


def _run(path: Path, *args: str, code: int = 0) -> dict[str, Any]:
    result = CliRunner(env=_env()).invoke(main, ["run", str(path), "--json", *args])
    assert result.exit_code == code, result.output
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def _billed_once(server: FakeServer, out: Path) -> None:
    """The server billed each of the 63 calls once, and each is in the log once."""
    _finish_jobs(server)
    log = RunLog(out)
    ids = pl.concat([log.read("answers").select("id"), log.read("reviews").select("id")])
    assert ids.height == ids["id"].n_unique() == CALLS
    assert server.stats()["counts"]["billed"] == CALLS
    # No job is left open: `arena status` lists none.
    status = CliRunner(env=_env()).invoke(main, ["status", str(out), "--json"])
    assert json.loads(status.stdout)["batch_jobs"] == []


def test_a_limit_run_after_a_kill_leaves_the_rest_of_the_jobs_for_the_next_run(
    tmp_path: Path, server: FakeServer
) -> None:
    path = _tournament(tmp_path, server, BATCH)
    _kill_after_jobs(path, 3)  # the three answer jobs (one a model)
    _finish_jobs(server)
    with FakeClock(server, 60.0):
        limited = _run(path, "--limit", "1")
        assert limited["completed"] + limited["invalid"] == 3 + 18
        # Answers to the other questions are in adopted jobs: not logged, still open.
        status = CliRunner(env=_env()).invoke(main, ["status", str(tmp_path / "out"), "--json"])
        assert sum(j["requests"] for j in json.loads(status.stdout)["batch_jobs"]) == 6
        _run(path)
    _billed_once(server, tmp_path / "out")


def test_a_run_stopped_by_its_budget_after_a_kill_leaves_the_rest_open(
    tmp_path: Path, server: FakeServer
) -> None:
    path = _tournament(tmp_path, server, BATCH)
    # 3 answer jobs (finished), then 6 review jobs: 51 requests.
    _kill_after_jobs(path, 9, server=server, finish_at=3)
    _finish_jobs(server)
    with FakeClock(server, 60.0):
        stopped = _run(path, "--budget", "0.1", code=4)  # 4: the budget stopped it
        assert stopped["budget_stopped"] and 0 < stopped["completed"] < 42
        _run(path)
    _billed_once(server, tmp_path / "out")


def test_a_run_without_batch_mode_adopts_the_open_jobs(
    tmp_path: Path, server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    path = _tournament(tmp_path, server, False)
    _kill_after_jobs(path, 3, "--batch")
    _finish_jobs(server)
    result = CliRunner(env=_env()).invoke(main, ["run", str(path), "--json"])
    assert result.exit_code == 0, result.output
    _billed_once(server, tmp_path / "out")
    # The answers came from the jobs; the reviews went out directly.
    counts = server.stats()["counts"]
    assert sum(counts.get(f"{t}.batch.lines", 0) for t in TYPES) == 9
    assert "adopted although batch mode is off" in caplog.text


def test_a_renamed_provider_adopts_the_jobs_of_its_old_name(
    tmp_path: Path, server: FakeServer
) -> None:
    path = _tournament(tmp_path, server, BATCH)
    _kill_after_jobs(path, 3)
    _finish_jobs(server)
    cfg = yaml.safe_load(path.read_text())
    cfg["providers"]["renamed"] = cfg["providers"].pop("p_openai")
    cfg["models"]["alpha"]["provider"] = "renamed"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    with FakeClock(server, 60.0):
        _run(path)
    _billed_once(server, tmp_path / "out")
    # The log keeps no key, only a digest of endpoint and key.
    jobs = RunLog(tmp_path / "out").read(BATCH_TABLE)
    assert set(jobs.filter(pl.col("model") == "alpha")["provider"]) == {"renamed"}
    for key in KEYS.values():
        assert not any(key in str(v) for row in jobs.iter_rows() for v in row)


def test_a_job_of_a_key_no_provider_has_is_reported(
    tmp_path: Path, server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    path = _tournament(tmp_path, server, BATCH)
    _kill_after_jobs(path, 3)
    _finish_jobs(server)
    cfg = yaml.safe_load(path.read_text())
    cfg["providers"]["p_openai"]["base_url"] = base_url(server, "openai") + "/"  # same endpoint
    cfg["providers"]["p_anthropic"]["api_key_env"] = "TEST_OTHER_KEY"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = {**_env(), "TEST_OTHER_KEY": KEYS["openai"]}  # a key the server knows, not the job's
    with FakeClock(server, 60.0):
        result = CliRunner(env=env).invoke(main, ["run", str(path), "--json"])
    assert result.exit_code == 0, result.output
    err = caplog.text
    assert "belong to an endpoint or key that no provider of this run has" in err
    assert "p_anthropic" in err


def test_a_job_the_api_no_longer_knows_is_given_up_with_a_warning(
    tmp_path: Path, server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    path = _tournament(tmp_path, server, BATCH)
    _kill_after_jobs(path, 3)
    server.reset()  # the jobs are gone (past the API's retention)
    with FakeClock(server, 60.0):
        _run(path)
    assert "is no longer there" in caplog.text
    log = RunLog(tmp_path / "out")
    assert log.read("answers").height + log.read("reviews").height == CALLS
    assert set(log.read(BATCH_TABLE)["state"]) <= {"collected", "gone", "void"}
