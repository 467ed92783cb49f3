"""`arena batcheval` killed with SIGKILL mid-run, then resumed: same result, nothing re-paid."""

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
import yaml

from arena.batcheval import TABLE
from arena.providers.sim import signature
from arena.store import RunLog

CONFIG: dict[str, Any] = {
    "name": "slow",
    "seed": 2,
    "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 2}}},
    "models": {"judge": {"provider": "sim", "sim": {"latency_mean": 0.03, "malformed_rate": 0.1}}},
    "batcheval": {
        "scorers": ["judge"],
        "criteria": [
            {"name": "quality", "description": "How good?", "scale": {"low": 1, "high": 3}}
        ],
        "batch_size": 3,
        "rounds": 3,
        "strategy": "heterogeneous",
    },
}


def _inputs(tmp: Path) -> tuple[Path, Path]:
    samples = tmp / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"id": f"x{i}", "text": f"T{i} {signature('w', (i % 5) / 2 - 1)}"}) + "\n"
            for i in range(30)
        )
    )
    cfg = tmp / "be.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    return samples, cfg


def _cmd(samples: Path, cfg: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "arena",
        "batcheval",
        str(samples),
        "--config",
        str(cfg),
        "--out",
        str(out),
        "--format",
        "json",
    ]


def _run(samples: Path, cfg: Path, out: Path) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(_cmd(samples, cfg, out), capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


def _journal_lines(out: Path) -> int:
    journal = out / "log" / f"{TABLE}.journal.jsonl"
    return journal.read_bytes().count(b"\n") if journal.exists() else 0


@pytest.mark.slow
def test_kill_9_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    samples, cfg = _inputs(tmp_path)
    ref_out, kill_out = tmp_path / "ref", tmp_path / "kill"
    code, reference = _run(samples, cfg, ref_out)
    assert code == 0 and reference["calls"]["pending"] == 0

    proc = subprocess.Popen(
        _cmd(samples, cfg, kill_out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while _journal_lines(kill_out) < 35:  # into round 2 of 3 (30 rows a round)
        assert proc.poll() is None, "finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = RunLog(kill_out).read(TABLE)
    assert 0 < before.height < 90

    code2, resumed = _run(samples, cfg, kill_out)
    assert code2 == 0
    assert resumed["calls"]["skipped"] >= 10  # round 1 at least
    assert resumed["calls"]["pending"] == 0
    assert resumed["results"] == reference["results"]

    after = RunLog(kill_out).read(TABLE).sort("id")
    ref = RunLog(ref_out).read(TABLE).sort("id")
    cols = ["id", "round", "batch_id", "sample_id", "score", "status", "text"]
    assert after.select(cols).equals(ref.select(cols))
    # whole batches logged before the kill were not paid for again
    complete = before.group_by("batch_id").agg(pl.len().alias("n")).filter(pl.col("n") == 3)
    kept = before.join(complete, on="batch_id").select("id", "run_id")
    redone = after.join(kept, on="id").filter(pl.col("run_id") != pl.col("run_id_right"))
    assert kept.height > 0 and redone.height == 0
