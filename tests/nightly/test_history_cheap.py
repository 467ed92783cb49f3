"""The end-of-run history snapshot: no duplicate when a run added nothing."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.nightly import read_history, snapshot_ids
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
