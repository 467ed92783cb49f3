"""An interrupted discussion resumes from its logged turns after kill -9."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arena.config import load_tournament
from arena.discuss import TABLE
from arena.engine import run_tournament
from arena.runner import RunSummary
from arena.store import RunLog
from tests.conftest import small_tournament

# Contestants review fast; the two judges who discuss are slow, so a kill lands
# in the middle of discussions.
_FAST = {"judge_noise": 1.0, "position_bias": 0.5}
_SLOW = {"skill": 1.0, "latency_mean": 0.15, "stubbornness": 0.8}


def _yaml(tmp: Path) -> Path:
    models: dict[str, Any] = {
        f"m{i}": {"provider": "sim", "sim": {"skill": float(3 - i), **_FAST}} for i in range(3)
    }
    models.update({j: {"provider": "sim", "sim": _SLOW} for j in ("j1", "j2")})
    return small_tournament(
        tmp,
        models=3,
        questions=4,
        extra={
            "models": models,
            "discussion": {"trigger": ["inconsistent", "tie"], "discussants": ["j1", "j2"]},
        },
    )


def _run(path: Path) -> RunSummary:
    """A run in this process (only the run that is killed needs its own)."""
    return asyncio.run(run_tournament(load_tournament(path)))


def _journal(out: Path) -> list[dict[str, Any]]:
    path = out / "log" / f"{TABLE}.journal.jsonl"
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a torn last line
            continue
    return rows


def _mid_discussion(out: Path) -> bool:
    """Some discussion has a turn logged and no final row yet."""
    rows = _journal(out)
    turns = {r.get("discussion_id") for r in rows if r.get("kind") == "turn"}
    finals = {r.get("discussion_id") for r in rows if r.get("kind") == "final"}
    return bool(turns - finals)


@pytest.mark.slow
def test_kill_9_mid_discussion_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    ref_dir, kill_dir = tmp_path / "ref", tmp_path / "kill"
    ref_dir.mkdir()
    kill_dir.mkdir()
    ref_summary = _run(_yaml(ref_dir))
    assert ref_summary.pending == 0 and ref_summary.by_stage["discussions"]["completed"] > 0

    path = _yaml(kill_dir)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not _mid_discussion(kill_dir / "out"):
        assert proc.poll() is None, "the run finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = RunLog(kill_dir / "out").read(TABLE)
    finished = set(before.filter(pl.col("kind") == "final")["discussion_id"].to_list())
    assert set(before["discussion_id"].to_list()) - finished  # killed mid-discussion

    resumed = _run(path)
    assert resumed.pending == 0 and resumed.failed == 0
    assert resumed.by_stage["discussions"]["skipped"] > 0
    after = RunLog(kill_dir / "out").read(TABLE).sort("id")
    ref = RunLog(ref_dir / "out").read(TABLE).sort("id")
    cols = [
        "id",
        "kind",
        "turn",
        "attempt",
        "speaker",
        "leader",
        "text",
        "preference",
        "verdict",
        "outcome",
        "status",
    ]
    assert after["id"].is_unique().all()
    assert after.select(cols).equals(ref.select(cols))
    # nothing logged before the kill was asked again
    kept = before.filter(pl.col("status") != "failed").select("id", "run_id")
    redone = after.join(kept, on="id").filter(pl.col("run_id") != pl.col("run_id_right"))
    assert redone.height == 0
