"""The end-of-run history snapshot: no duplicate when a run added nothing."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.config import load_tournament
from arena.engine import build_plan
from arena.rundir import read_history, snapshot_ids
from arena.rundir._runs import _open_calls
from tests.conftest import small_tournament


def run(path: Path) -> int:
    return CliRunner().invoke(main, ["run", str(path), "--json"]).exit_code


def test_a_run_that_added_nothing_appends_no_snapshot(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=2)
    assert run(path) == 0
    assert len(snapshot_ids(read_history(tmp_path / "out"))) == 1
    assert run(path) == 0  # everything logged already: nothing new to remember
    assert len(snapshot_ids(read_history(tmp_path / "out"))) == 1
    # A changed config (here a new question) adds calls: a new snapshot.
    with (tmp_path / "q.jsonl").open("a") as f:
        f.write('{"id": "q9", "text": "One more?"}\n')
    assert run(path) == 0
    history = read_history(tmp_path / "out")
    assert len(snapshot_ids(history)) == 2
    assert sorted(set(history["calls_planned"].to_list())) == [2 * 3 + 2 * 6 * 3, 3 * 3 + 3 * 6 * 3]


def test_open_calls_of_the_snapshot_match_the_log(tmp_path: Path) -> None:
    # Some calls fail for good (one attempt): the snapshot's open calls, counted from the
    # run's start and its results, are those the log's ids and statuses give.
    path = small_tournament(
        tmp_path,
        models=3,
        questions=3,
        sim={"failure_rate": 0.2},
        extra={"retry": {"max_attempts": 1, "backoff_base": 0.001, "backoff_max": 0.01}},
    )
    assert run(path) == 3
    t = load_tournament(path)
    history = read_history(t.output_dir)
    assert history["calls_open"][0] == _open_calls(t, build_plan(t)) > 0
    # Made again, the same calls fail the same way: nothing changed, no new snapshot.
    assert run(path) == 3
    assert len(snapshot_ids(read_history(t.output_dir))) == 1
