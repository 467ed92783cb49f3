"""The public surface of arena.report is a contract."""

from __future__ import annotations

import arena.report as report
from arena.config import ConfigError


def test_public_names() -> None:
    assert set(report.__all__) >= {
        "build_leaderboard",
        "leaderboard_dict",
        "load_reviews_file",
        "load_run",
        "render_json",
        "render_markdown",
        "render_table",
        "Leaderboard",
        "LeaderboardOptions",
        "LeaderboardInputError",
    }
    for name in report.__all__:
        assert hasattr(report, name), name


def test_input_errors_are_config_errors() -> None:
    # The CLI maps ConfigError to exit 2.
    assert issubclass(report.LeaderboardInputError, ConfigError)
    error = report.LeaderboardInputError("r.csv", "line 3", "unknown score 5")
    assert str(error) == "r.csv: line 3: unknown score 5"
