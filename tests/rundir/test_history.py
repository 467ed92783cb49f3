"""The history table after several runs, `--history` and `--diff`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arena.report import build_leaderboard, leaderboard_dict
from arena.rundir import diff_snapshots, read_history, snapshot_ids, snapshot_rows
from tests.conftest import small_tournament
from tests.rundir._support import add_model, board_cli, edit_yaml, run


@pytest.fixture
def three_runs(tmp_path: Path) -> Path:
    """A run directory after three nightly runs: m0-m2, then + m3, then - m1."""
    yaml_path = small_tournament(tmp_path, models=3, questions=3)
    assert run(yaml_path)["exit_code"] == 0
    edit_yaml(yaml_path, add_model("m3", 2.5))
    assert run(yaml_path)["exit_code"] == 0
    edit_yaml(yaml_path, lambda d: d["contestants"].remove("m1"))
    assert run(yaml_path)["exit_code"] == 0
    return tmp_path / "out"


def test_each_completed_run_appends_a_snapshot(three_runs: Path) -> None:
    history = read_history(three_runs)
    ids = snapshot_ids(history)
    assert len(ids) == 3
    models = [history.filter(pl.col("snapshot") == s)["model"].to_list() for s in ids]
    assert [sorted(m) for m in models] == [
        ["m0", "m1", "m2"],
        ["m0", "m1", "m2", "m3"],
        ["m0", "m2", "m3"],
    ]
    firsts = history.unique("snapshot", keep="first").sort("at")
    assert firsts["command"].to_list() == ["run"] * 3
    assert firsts["config_hash"].n_unique() == 3
    assert firsts["calls_open"].to_list() == [0, 0, 0]
    assert firsts["calls_planned"].to_list() == [3 * (3 + 6 * 3), 3 * (4 + 12 * 4), 3 * (3 + 6 * 3)]
    assert (history["bt_ci_low"] <= history["bt"]).all()
    assert (history["bt"] <= history["bt_ci_high"]).all()
    # The last snapshot holds exactly what `arena leaderboard` shows now.
    board = leaderboard_dict(build_leaderboard(three_runs))
    last = history.filter(pl.col("snapshot") == ids[-1]).sort("rank")
    assert last["model"].to_list() == [m["model"] for m in board["models"]]
    assert last["bt"].to_list() == pytest.approx([m["bt"] for m in board["models"]])
    assert last["reviews"][0] == board["counts"]["reviews"]


def test_history_option_shows_every_snapshot(three_runs: Path) -> None:
    result = board_cli(str(three_runs), "--history", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [len(s["models"]) for s in data["snapshots"]] == [3, 4, 3]
    assert all(s["models"][0]["rank"] == 1 for s in data["snapshots"])
    table = board_cli(str(three_runs), "--history")
    assert table.exit_code == 0
    assert "Rating history" in table.stdout and "m3" in table.stdout
    markdown = board_cli(str(three_runs), "--history", "--format", "markdown").stdout
    assert markdown.startswith("# Rating history") and "| m1 |" in markdown


def test_diff_shows_rank_moves_rating_changes_and_dropped_models(three_runs: Path) -> None:
    result = board_cli(str(three_runs), "--diff", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["config_changed"] is True
    changes = {c["model"]: c for c in data["models"]}
    assert changes["m1"]["status"] == "dropped" and changes["m1"]["rank_after"] is None
    for name in ("m0", "m2", "m3"):
        c = changes[name]
        assert c["status"] == "kept"
        assert c["rank_move"] == c["rank_before"] - c["rank_after"]
        assert c["bt_change_raw"] == pytest.approx(c["bt_after"] - c["bt_before"])
    # Anchored on the models ranked both times: their mean change is zero.
    assert sum(changes[n]["bt_change"] for n in ("m0", "m2", "m3")) == pytest.approx(0, abs=1e-6)
    assert [c["model"] for c in data["models"]][-1] == "m1"  # dropped ones last
    text = board_cli(str(three_runs), "--diff").stdout
    assert "dropped" in text and "Changes since the previous snapshot" in text


def test_diff_of_known_snapshots() -> None:
    def board(*names: str) -> dict[str, object]:
        models = [
            {
                "model": n,
                "bt": 1100.0 - 50 * i,
                "bt_ci_low": 1000.0 - 50 * i,
                "bt_ci_high": 1200.0 - 50 * i,
            }
            for i, n in enumerate(names)
        ]
        return {"models": models, "counts": {"reviews": 10, "invalid": 0, "failed": 0}}

    common = {
        "command": "run",
        "config_hash": "h",
        "n_questions": 1,
        "calls_planned": 1,
        "calls_open": 0,
    }
    rows = snapshot_rows(board("a", "b", "c"), at=1.0, **common)  # type: ignore[arg-type]
    rows += snapshot_rows(board("c", "a", "d"), at=2.0, **common)  # type: ignore[arg-type]
    history = pl.DataFrame(rows)
    before, after = snapshot_ids(history)
    changes = {c.model: c for c in diff_snapshots(history, before, after)}
    assert (changes["c"].rank_move, changes["c"].bt_change_raw) == (2, 100.0)
    assert (changes["a"].rank_move, changes["a"].bt_change_raw) == (-1, -50.0)
    # Anchored on a and c (ranked both times): their mean moved +25.
    assert (changes["c"].bt_change, changes["a"].bt_change) == (75.0, -75.0)
    # c passed a; with intervals +-100 wide neither the order nor the ratings are sure.
    assert changes["c"].rank_significant is False and changes["c"].rating_significant is False
    assert changes["d"].status == "new" and changes["d"].rank_move is None
    assert changes["b"].status == "dropped" and changes["b"].bt_after is None


def test_history_of_a_directory_without_runs_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "log").mkdir()
    result = board_cli(str(tmp_path), "--history")
    assert result.exit_code == 2
    assert "no history yet" in result.output


def test_rank_intervals_of_the_leaderboard_decide_a_rank_move() -> None:
    """With rank intervals in both snapshots, a move is real when they do not overlap."""

    def board(order: list[str], intervals: dict[str, tuple[int, int]]) -> dict[str, object]:
        models = [
            {
                "model": n,
                "bt": 1100.0 - 100 * i,
                "bt_ci_low": 1090.0 - 100 * i,
                "bt_ci_high": 1110.0 - 100 * i,
                "rank_low": intervals[n][0],
                "rank_high": intervals[n][1],
            }
            for i, n in enumerate(order)
        ]
        return {"models": models, "counts": {"reviews": 10, "invalid": 0, "failed": 0}}

    common = {
        "command": "run",
        "config_hash": "h",
        "n_questions": 1,
        "calls_planned": 1,
        "calls_open": 0,
    }
    sure = {"a": (1, 1), "b": (2, 2), "c": (3, 3)}
    unsure = {"a": (1, 3), "b": (1, 3), "c": (1, 3)}
    rows = snapshot_rows(board(["a", "b", "c"], sure), at=1.0, **common)  # type: ignore[arg-type]
    sure_after = {"c": (1, 1), "a": (2, 2), "b": (3, 3)}
    rows += snapshot_rows(board(["c", "a", "b"], sure_after), at=2.0, **common)  # type: ignore[arg-type]
    rows += snapshot_rows(board(["a", "c", "b"], unsure), at=3.0, **common)  # type: ignore[arg-type]
    history = pl.DataFrame(rows)
    first, second, third = snapshot_ids(history)
    moved = {c.model: c for c in diff_snapshots(history, first, second)}
    assert moved["c"].rank_significant is True and moved["c"].rank_move == 2
    back = {c.model: c for c in diff_snapshots(history, second, third)}
    assert back["c"].rank_move == -1 and back["c"].rank_significant is False
