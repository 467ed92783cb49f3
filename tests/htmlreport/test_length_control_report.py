"""`arena report --baseline MODEL --length-control`: the LC columns of the baseline table."""

from __future__ import annotations

import pytest

from arena.htmlreport import build_report, render_report
from arena.report import LeaderboardOptions
from tests.viewer._support import shared_run


def test_baseline_table_has_the_length_controlled_columns(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    run = shared_run(tmp_path_factory)
    options = LeaderboardOptions(elo_orders=5, bootstrap=20, baseline="m0", length_control=True)
    data = build_report(run, options=options, battles=0)
    rows = data.leaderboard["vs_baseline"]
    assert rows and all(0 <= row["lc_win_rate"] <= 1 for row in rows)
    page = render_report(data)
    assert "LC win rate %" in page and "LC 95% CI" in page
    first = rows[0]
    assert f"{100 * first['lc_win_rate']:.2f}" in page
    plain = render_report(
        build_report(run, options=LeaderboardOptions(elo_orders=5, bootstrap=20, baseline="m0"))
    )
    assert "LC win rate %" not in plain
