"""`arena run` end to end on the simulator: results, resume, kill -9, signals, lock."""

from __future__ import annotations

import json
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
from arena.config import load_tournament
from arena.pipeline import build_plan
from arena.store import RunLock, RunLog
from tests.conftest import small_tournament


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout
    )


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    """`arena run --json` in this process (the kill, signal, lock and bad-input cases
    run the program as a subprocess)."""
    result = CliRunner().invoke(main, ["run", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout.strip().splitlines()[-1])


def _reviews(out: Path) -> pl.DataFrame:
    return RunLog(out).read("reviews").sort("id")


def test_full_run_logs_every_call_then_resume_skips_all(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=3, multi_turn=True)
    code, summary = run_json(str(yaml_path))
    assert code == 0, summary
    n_reviews = 3 * 3 * 2 * 3
    assert summary["planned"] == 9 + n_reviews
    assert summary["completed"] + summary["invalid"] == summary["planned"]
    assert summary["pending"] == 0 and summary["failed"] == 0
    reviews = _reviews(tmp_path / "out")
    assert reviews.height == n_reviews
    assert set(reviews["verdict"].unique().to_list()) <= {"A", "B", "tie"}
    answers = RunLog(tmp_path / "out").read("answers")
    multi = answers.filter(pl.col("question_id") == "0")
    assert all(len(t) == 2 for t in multi["answer_turns"].to_list())
    snapshot = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert snapshot["models"]["m0"]["sim_skill"] == 3.0

    code, again = run_json(str(yaml_path))
    assert code == 0
    assert again["skipped"] == again["planned"] and again["completed"] == 0
    assert _reviews(tmp_path / "out").height == n_reviews


def test_failures_and_malformed_verdicts_are_recorded(tmp_path: Path) -> None:
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=4,
        sim={"failure_rate": 0.6, "malformed_rate": 0.3},
        extra={"retry": {"max_attempts": 2, "backoff_base": 0.0, "backoff_max": 0.0}},
    )
    code, summary = run_json(str(yaml_path))
    assert code == 3
    assert summary["failed"] > 0 and summary["invalid"] > 0
    log = RunLog(tmp_path / "out")
    reviews, answers = log.read("reviews"), log.read("answers")
    failed = pl.concat(
        [
            reviews.select("status", "error", "attempts"),
            answers.select("status", "error", "attempts"),
        ]
    ).filter(pl.col("status") == "failed")
    assert failed.height == summary["failed"]
    assert failed["error"].str.contains("503").all()
    assert (failed["attempts"] == 2).all()
    invalid = reviews.filter(pl.col("status") == "invalid")
    assert invalid.height == summary["invalid"]
    assert (invalid["verdict"] == "invalid").all()
    assert reviews.filter(pl.col("status") == "failed")["text"].is_null().all()


def _slow_tournament(tmp_path: Path) -> Path:
    return small_tournament(
        tmp_path,
        models=4,
        questions=4,
        sim={"latency_mean": 0.03, "failure_rate": 0.05},
        extra={"providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 4}}}},
    )


def _journal_rows(out: Path) -> int:
    total = 0
    for f in (out / "log").glob("*.jsonl") if (out / "log").exists() else []:
        total += f.read_bytes().count(b"\n")
    return total


def _wait_for_rows(out: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while _journal_rows(out) < n:
        assert proc.poll() is None, "run finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.slow
def test_kill_9_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    ref_dir, kill_dir = tmp_path / "ref", tmp_path / "kill"
    ref_dir.mkdir()
    kill_dir.mkdir()
    ref_yaml, kill_yaml = _slow_tournament(ref_dir), _slow_tournament(kill_dir)
    code, ref_summary = run_json(str(ref_yaml))
    assert ref_summary["pending"] == 0

    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(kill_yaml), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_rows(kill_dir / "out", 60, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _reviews(kill_dir / "out")
    assert before.height > 0
    code2, resumed = run_json(str(kill_yaml))
    assert code2 == code
    assert resumed["skipped"] > 0
    assert (
        resumed["completed"] + resumed["invalid"] + resumed["failed"] + resumed["skipped"]
        == resumed["planned"]
    )

    after_answers = RunLog(kill_dir / "out").read("answers")
    ref_answers = RunLog(ref_dir / "out").read("answers")
    after = _reviews(kill_dir / "out")
    ref = _reviews(ref_dir / "out")
    assert after["id"].is_unique().all()
    cols = ["id", "status", "verdict", "text"]
    assert after.select(cols).equals(ref.select(cols))
    assert (
        after_answers.sort("id")
        .select("id", "answer_turns")
        .equals(ref_answers.sort("id").select("id", "answer_turns"))
    )
    # nothing logged before the kill was paid for again
    kept = before.filter(pl.col("status") != "failed")
    redone = after.join(kept.select("id", "run_id"), on="id").filter(
        pl.col("run_id") != pl.col("run_id_right")
    )
    assert redone.height == 0


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_stops_cleanly_and_is_resumable(tmp_path: Path, sig: int, code: int) -> None:
    yaml_path = _slow_tournament(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(yaml_path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_rows(tmp_path / "out", 20, proc)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["pending"] > 0
    code2, resumed = run_json(str(yaml_path))
    assert code2 in (0, 3)
    assert resumed["pending"] == 0
    assert _reviews(tmp_path / "out")["id"].is_unique().all()


def test_second_run_on_locked_directory_exits_75(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path)
    (tmp_path / "out").mkdir()
    with RunLock(tmp_path / "out"):
        proc = arena("run", str(yaml_path))
    assert proc.returncode == 75
    assert "out" in proc.stderr


def test_bad_config_exits_2_before_any_call(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path)
    yaml_path.write_text(yaml_path.read_text().replace("provider: sim", "provider: nope", 1))
    proc = arena("run", str(yaml_path))
    assert proc.returncode == 2
    assert "models.m0.provider" in proc.stderr and str(yaml_path) in proc.stderr
    assert not (tmp_path / "out").exists()


def test_plan_counts_calls_per_model(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    result = CliRunner().invoke(main, ["plan", str(yaml_path), "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["total"]["answers"] == 6
    assert plan["total"]["reviews"] == 2 * 3 * 2 * 3
    assert {r["model"]: r["reviews"] for r in plan["rows"]} == {"m0": 12, "m1": 12, "m2": 12}
    t = load_tournament(yaml_path)
    assert build_plan(t).size == plan["total"]["calls"]
