"""Four kill -9s at different moments, then a full run: the uninterrupted run's leaderboard."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.store import RunLog
from tests.conftest import small_tournament


def _tournament(root: Path) -> Path:
    root.mkdir()
    return small_tournament(
        root,
        models=4,
        questions=3,
        multi_turn=True,
        sim={"latency_mean": 0.02, "malformed_rate": 0.1},
        extra={"providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 4}}}},
    )


def _live_rows(out: Path) -> int:
    """Rows in the live journals: what the running process has logged so far."""
    log = out / "log"
    return (
        sum(f.read_bytes().count(b"\n") for f in log.glob("*.journal.jsonl")) if log.is_dir() else 0
    )


def _recover(out: Path) -> None:
    """Compact what a killed run left, so the next run's journals start empty."""

    async def open_and_close() -> None:
        async with RunLog(out).writer():
            pass

    if out.is_dir():
        asyncio.run(open_and_close())


def _leaderboard(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.stdout)
    return board


@pytest.mark.slow
def test_four_kills_then_resume_give_the_uninterrupted_leaderboard_elo_included(
    tmp_path: Path,
) -> None:
    ref_yaml, kill_yaml = _tournament(tmp_path / "ref"), _tournament(tmp_path / "kill")
    out = tmp_path / "kill" / "out"
    # Kill during start-up, then once this run has logged 2, 25 and 50 rows.
    for rows in (None, 2, 25, 50):
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "run", str(kill_yaml), "--json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if rows is None:
            time.sleep(0.3)
        else:
            deadline = time.monotonic() + 60
            while _live_rows(out) < rows:
                assert proc.poll() is None, "the run ended before it could be killed"
                assert time.monotonic() < deadline
                time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        _recover(out)
    assert 0 < len(RunLog(out).ids("reviews")) < 4 * 3 * 3 * 4
    for yaml_path in (kill_yaml, ref_yaml):
        done = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout.strip().splitlines()[-1])["pending"] == 0
    assert _leaderboard(out) == _leaderboard(tmp_path / "ref" / "out")
