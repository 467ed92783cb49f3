"""`build_leaderboard(ratings_only=True)`, what a run's history snapshot needs, and nothing more."""

from __future__ import annotations

from pathlib import Path

from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict
from tests.discuss.test_leaderboard import _run_dir

OPTIONS = LeaderboardOptions(bootstrap=10, elo_orders=3)
RATINGS = ("bt", "bt_ci_low", "bt_ci_high", "win_rate", "weighted_win_rate", "elo", "wins")


def test_same_ratings_without_the_discussion_comparison(tmp_path: Path) -> None:
    out = _run_dir(tmp_path, "replace")
    full = leaderboard_dict(build_leaderboard(out, options=OPTIONS))
    lean = leaderboard_dict(build_leaderboard(out, options=OPTIONS, ratings_only=True))
    assert "discussion" in full and "discussion" not in lean
    assert [{k: m[k] for k in ("model", *RATINGS)} for m in lean["models"]] == [
        {k: m[k] for k in ("model", *RATINGS)} for m in full["models"]
    ]
    assert lean["counts"] == full["counts"]
