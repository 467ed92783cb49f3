"""A real (tiny) sim run, then its leaderboard: the run-directory contract end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.config import load_tournament
from arena.engine import run_tournament
from tests.conftest import small_tournament
from tests.report._support import JSON_KEYS


def test_leaderboard_of_a_sim_run(tmp_path: Path) -> None:
    tournament = load_tournament(small_tournament(tmp_path, models=3, questions=4))
    asyncio.run(run_tournament(tournament))
    result = CliRunner().invoke(
        leaderboard,
        [str(tournament.output_dir), "--format", "json", "--elo-orders", "5", "--bootstrap", "20"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert JSON_KEYS <= set(data)
    assert {"true_order", "kendall_tau"} <= set(data)
    # small_tournament gives m0 the highest skill.
    assert data["true_order"] == ["m0", "m1", "m2"]
    assert data["counts"]["reviews"] == 4 * 3 * 2 * 3  # questions x ordered pairs x reviewers
    bts = [m["bt"] for m in data["models"]]
    assert bts == sorted(bts, reverse=True)
    # The log holds the answers, so style control runs (and is scored against the truth).
    assert set(data["kendall_tau"]) == {"win_rate", "weighted_win_rate", "elo", "bt", "bt_style"}
    assert data["style_control"]["available"] is True
    assert "length" in data["style_control"]["features"]
