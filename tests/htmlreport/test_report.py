"""`arena report`: the data it is built from, the HTML it writes, escaping, the command."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

import pytest

from arena.htmlreport import (
    ReportData,
    Series,
    build_report,
    heatmap,
    interval_chart,
    line_chart,
    render_report,
    trajectory_chart,
)
from arena.report import LeaderboardOptions, leaderboard_dict
from tests.viewer._support import PAYLOAD, cli, shared_run

FAST = LeaderboardOptions(elo_orders=5, bootstrap=20)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    return build_report(shared_run(tmp_path_factory), options=FAST, battles=100)


def test_report_data(data: ReportData) -> None:
    assert data.title == "small"
    assert data.leaderboard == leaderboard_dict(data.board)
    # Battles between two models, both orders, every reviewer: 4 questions x 2 x 3.
    assert data.leaderboard["diagnostics"]["pair_battles"] == {
        a: {b: 24 for b in ("m0", "m1", "m2") if b != a} for a in ("m0", "m1", "m2")
    }
    assert data.leaderboard["style_control"]["available"]
    assert len(data.history) == 2 and set(data.history[0]["models"]) == {"m0", "m1", "m2"}
    assert len(data.battles) == 12
    assert {c["table"] for c in data.calls} == {"answers", "reviews", "discussions", "batcheval"}
    assert data.board.discussion is not None and data.board.batcheval is not None


def test_html_escapes_every_text_and_has_no_script(data: ReportData) -> None:
    page = render_report(data)
    assert PAYLOAD not in page
    assert html.escape(PAYLOAD) in page  # the answer and the review, as text
    assert html.escape("Explain " + PAYLOAD) in page  # the question
    assert "<script" not in page.lower()
    assert not re.search(r"<(img|iframe|object|embed|link)\b", page)
    links = re.findall(r"<a\b[^>]*>", page)  # only the table of contents
    assert links and all(re.fullmatch(r'<a href="#[a-z-]+">', link) for link in links)
    assert not re.search(r"\son[a-z]+=", page.replace(html.escape(PAYLOAD), ""))
    # Offline: no external resource anywhere (the SVG namespace is a name, not a fetch).
    assert not re.search(r"(src|href)=\"?(https?:|//)", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_sections_and_rows(data: ReportData) -> None:
    page = render_report(data)
    for section in (
        'id="leaderboard"',
        'id="ratings"',
        'id="heatmap"',
        'id="reviewers"',
        'id="history"',
        'id="discussion"',
        'id="batcheval"',
        'id="calls"',
        'id="battles"',
    ):
        assert section in page
    table = page.split('id="leaderboard"')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + 3  # header and a row per model
    for m in data.leaderboard["models"]:
        assert f"<td>{m['model']}</td>" in table or f"<td>{m['model']} *</td>" in table
        assert f">{m['bt']:.0f}<" in table
    assert page.count('<details class="battle"') == 12
    # The average answer length of each model, from the run's answers.
    assert '<th class="num">avg length</th>' in table
    assert set(data.avg_length) == {m["model"] for m in data.leaderboard["models"]}
    for model, length in data.avg_length.items():
        row = table.split(f"<td>{model}")[1].split("</tr>")[0]
        assert f'<td class="num">{length:.0f}</td>' in row


def test_rank_intervals_style_control_and_new_fields(data: ReportData) -> None:
    """Rank intervals, style control, intervals of every figure, and fields not known yet."""
    board = dict(data.leaderboard)
    models = []
    for k, m in enumerate(data.leaderboard["models"]):
        models.append(
            {
                **m,
                "rank": k + 1,
                "rank_low": 1,
                "rank_high": k + 2,
                "bt_style": m["bt"] - 10,
                "bt_style_ci_low": m["bt"] - 40,
                "bt_style_ci_high": m["bt"] + 20,
                "style_rank": 3 - k,
                "win_rate_ci_low": m["win_rate"] - 0.1,
                "win_rate_ci_high": m["win_rate"] + 0.1,
                "few_data": k == 2,
                "questions": 4,
                "surprise": 0.5,
            }
        )
    board["models"] = models
    names = [m["model"] for m in models]
    board["neighbours"] = [
        {"upper": names[0], "lower": names[1], "share": 0.97, "separated": True},
    ]
    board["style_control"] = {
        "available": True,
        "coefficients": {
            "length": {"coef": 0.42, "ci_low": 0.3, "ci_high": 0.55, "scale": 1.0},
            "bold": {"coef": -0.1, "ci_low": -0.25, "ci_high": 0.05, "scale": 1.0},
        },
    }
    board["diagnostics"] = {
        **board["diagnostics"],
        "pair_battles": {a: {b: 7 for b in names if b != a} for a in names},
    }
    page = render_report(dataclasses.replace(data, leaderboard=board))
    table = page.split('id="leaderboard"')[1].split("</table>")[0]
    header = table.split("</thead>")[0]
    for column in ("rank CI", "BT style", "style CI", "style #", "beats next", "surprise"):
        assert f">{column}<" in header, column
    assert '<td class="num">1-3</td>' in table  # the second model's rank interval
    assert '<td class="num">0.97</td>' in table
    assert f"<td>{names[2]} *</td>" in table and f"<td>{names[1]}</td>" in table
    assert "few questions or battles" in page
    ratings = page.split('id="ratings"')[1].split("</svg>")[0]
    assert ratings.count('class="point"') == 6  # raw and style-controlled, 3 models each
    assert "Bradley-Terry, style-controlled" in ratings
    win_rates = page.split('id="chart-win-rates"')[1].split("</svg>")[0]
    assert win_rates.count(", win rate: ") == 3 and win_rates.count('class="whisker"') >= 3
    assert '<table id="style">' in page and ">0.420<" in page and ">0.300-0.550<" in page
    assert ">[-0.250, 0.050]<" in page
    assert page.split('id="heatmap"')[1].count("n=7") == 6
    unavailable = dict(board, style_control={"available": False, "reason": "no answer texts"})
    page = render_report(dataclasses.replace(data, leaderboard=unavailable))
    assert "Style control unavailable: no answer texts." in page


def test_weighted_heatmap_and_elo_trajectory(data: ReportData) -> None:
    import numpy as np

    from arena.rank import ranking_trajectory, weighted_pairwise

    page = render_report(data)
    section = page.split('<section id="weighted">')[1].split("</section>")[0]
    grid = section.split('id="weighted-heatmap"')[1].split("</svg>")[0]
    assert grid.count('class="cell"') == 6 and grid.count("n=24") == 6
    shares = weighted_pairwise(data.board.ranking)
    code = {name: k for k, name in enumerate(data.board.contestants)}
    for row in ("m0", "m1", "m2"):
        for col in ("m0", "m1", "m2"):
            if row != col:
                share = shares[code[row], code[col]]
                assert f"{row} vs {col}: wins {share:.3f} of 24 battles" in grid
    assert "reliability weights" in section  # the default weighting, named
    chart = section.split('id="elo-trajectory"')[1].split("</svg>")[0]
    assert chart.count('class="trajectory"') == 3
    # Each line ends at the model's Elo in the leaderboard.
    for m in data.leaderboard["models"]:
        assert f"{m['model']}: {m['elo']:.0f} at the end" in chart
    trajectory = ranking_trajectory(data.board.ranking)
    assert trajectory is not None and trajectory.orders == 5  # FAST: 5 Elo orders
    elo = np.array([m["elo"] for m in data.leaderboard["models"]])
    ends = [trajectory.rating[-1, code[m["model"]]] for m in data.leaderboard["models"]]
    np.testing.assert_allclose(ends, elo, atol=1e-6)


def test_no_elo_trajectory_without_elo(tmp_path_factory: pytest.TempPathFactory) -> None:
    options = LeaderboardOptions(elo_orders=0, bootstrap=0, weights="peerrank")
    page = render_report(build_report(shared_run(tmp_path_factory), options=options))
    section = page.split('<section id="weighted">')[1].split("</section>")[0]
    assert 'id="weighted-heatmap"' in section and "PeerRank weights" in section
    assert 'id="elo-trajectory"' not in section and "No Elo trajectory" in section


def test_charts_escape_and_skip_missing() -> None:
    svg = interval_chart(
        ["<b>x</b>", "y"],
        [Series("bt", [1000.0, None], [900.0, None], [1100.0, None])],
    )
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg
    assert svg.count('class="point"') == 1 and svg.count('class="whisker"') == 1
    assert "No estimates" in interval_chart(["a"], [Series("bt", [None], [None], [None])])
    grid = heatmap(["a", "b"], {"a": {"b": 0.75}, "b": {"a": 0.25}}, {"a": {"b": 8}, "b": {"a": 8}})
    assert grid.count('class="cell"') == 2 and "0.75" in grid and "n=8" in grid
    lines = line_chart(["#1", "#2"], {"a": [1000.0, 1010.0], "b": [990.0, None]})
    assert lines.count('class="line"') == 1  # b has one point: no line
    assert "Not enough" in line_chart(["#1"], {"a": [1000.0]})
    path = trajectory_chart([0, 5, 10], {"<i>a</i>": [1000.0, 1010.0, 1020.0], "b": [990.0] * 3})
    assert "<i>" not in path and "&lt;i&gt;a&lt;/i&gt;: 1020 at the end" in path
    assert path.count('class="trajectory"') == 2
    assert "Not enough" in trajectory_chart([0], {"a": [1000.0]})


def test_report_command(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    run = shared_run(tmp_path_factory)
    human = tmp_path / "human.jsonl"
    human.write_text(
        '{"question_id": "q1", "model_a": "m0", "model_b": "m1", "reviewer": "h", "verdict": "A"}\n'
        '{"question_id": "q2", "model_a": "m2", "model_b": "m0", "reviewer": "h", "verdict": "B"}\n'
    )
    out = tmp_path / "sub" / "r.html"
    result = cli(
        "report",
        str(run),
        "-o",
        str(out),
        "--human",
        str(human),
        "--battles",
        "2",
        "--bootstrap",
        "10",
        "--elo-orders",
        "2",
    )
    assert result.exit_code == 0, result.output
    assert str(out) in result.output
    page = out.read_text()
    assert "human accuracy" in page and "labelled battles" in page
    # The leaderboard's judging choices: equal weights, no reviews of one's own battles.
    equal = cli(
        "report",
        str(run),
        "-o",
        str(out),
        "--weights",
        "equal",
        "--no-self",
        "--battles",
        "0",
        "--bootstrap",
        "0",
        "--elo-orders",
        "0",
    )
    assert equal.exit_code == 0, equal.output
    reviewers = out.read_text().split('id="reviewers"')[1].split("</table>")[0]
    weights = re.findall(r"<tr><td>m\d</td><td class=\"num\">([0-9.]+)</td>", reviewers)
    assert len(weights) == 3 and len(set(weights)) == 1
    assert page.count('<details class="battle"') == 2


def test_report_command_default_path_and_bad_input(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from tests.conftest import small_tournament

    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    assert cli("run", str(yaml_path)).exit_code == 0
    result = cli("report", str(tmp_path / "out"), "--bootstrap", "0", "--elo-orders", "0")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "report.html").exists()
    missing = cli("report", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "no such run directory" in missing.output
    bad = cli("report", str(tmp_path / "out"), "--anchor", "zz")
    assert bad.exit_code == 2 and "zz" in bad.output


def test_baseline_section(tmp_path_factory: pytest.TempPathFactory) -> None:
    options = dataclasses.replace(FAST, baseline="m0")
    with_baseline = build_report(shared_run(tmp_path_factory), options=options, battles=0)
    rows = with_baseline.leaderboard["vs_baseline"]
    assert [row["model"] for row in rows] != [] and "m0" not in {row["model"] for row in rows}
    page = render_report(with_baseline)
    assert 'id="baseline-table"' in page and "Win rate against m0" in page
    first = rows[0]
    assert f"{100 * first['win_rate']:.2f}" in page
