"""A run stopped during its reviews starts no discussion; resumed, it equals one never stopped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import arena.discuss  # noqa: F401  (registers the stage)
from arena.cli import main
from arena.config import load_tournament
from arena.discuss import TABLE
from arena.engine import run_tournament
from arena.providers.sim import SimProvider
from arena.scheduler import Scheduler
from arena.store import RunLog
from arena.types import GenerateRequest, GenerateResult
from tests.conftest import small_tournament

SECTION = {"trigger": ["tie", "inconsistent"], "discussants": "top2"}
MODELS, QUESTIONS = 4, 3
ANSWERS = MODELS * QUESTIONS


def _yaml(root: Path) -> Path:
    root.mkdir()
    return small_tournament(
        root,
        models=MODELS,
        questions=QUESTIONS,
        sim={"judge_noise": 0.8, "position_bias": 0.4},
        extra={"discussion": SECTION},
    )


def _leaderboard(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.stdout)
    return board


@pytest.mark.parametrize("how", ["signal", "budget"])
def test_a_stop_during_reviews_starts_no_discussion_and_resuming_equals_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    ref_yaml, stop_yaml = _yaml(tmp_path / "ref"), _yaml(tmp_path / "stop")
    asyncio.run(run_tournament(load_tournament(ref_yaml)))
    reference = RunLog(tmp_path / "ref" / "out").read(TABLE)
    assert reference.height > 0  # the uninterrupted run discussed some battles

    box: dict[str, Scheduler] = {}
    calls = {"n": 0}
    generate = SimProvider.generate

    async def stopping(self: SimProvider, request: GenerateRequest) -> GenerateResult:
        calls["n"] += 1
        if calls["n"] == ANSWERS + 20:  # a third of the reviews in: Ctrl-C, or the budget
            if how == "signal":
                box["s"].stop()
            else:
                box["s"]._halt("budget")
        return await generate(self, request)

    monkeypatch.setattr(SimProvider, "generate", stopping)
    stopped = asyncio.run(
        run_tournament(load_tournament(stop_yaml), on_scheduler=lambda s: box.update(s=s))
    )
    assert stopped.pending > 0
    out = tmp_path / "stop" / "out"
    assert RunLog(out).read(TABLE).height == 0  # no opening rows from a partial review set
    monkeypatch.setattr(SimProvider, "generate", generate)
    asyncio.run(run_tournament(load_tournament(stop_yaml)))
    cols = ["id", "discussion_id", "turn", "speaker", "leader", "text", "verdict"]
    resumed = RunLog(out).read(TABLE)
    assert resumed.select(cols).sort("id").equals(reference.select(cols).sort("id"))
    ref_board, board = _leaderboard(tmp_path / "ref" / "out"), _leaderboard(out)
    assert board["models"] and board["discussion"]
    assert board == ref_board
