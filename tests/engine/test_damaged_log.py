"""A damaged or deleted log part: run, status and leaderboard go on, and its calls run again."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.store import RunLog
from arena.store._files import list_parts
from tests.conftest import small_tournament


def test_damaged_and_deleted_parts_are_reported_and_their_calls_run_again(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(yaml_path)]).exit_code == 0
    out = tmp_path / "out"  # the writer's close compacted each table into one part
    (answers_part,) = [p for _, p in list_parts(out / "log", "answers")]
    (reviews_part,) = [p for _, p in list_parts(out / "log", "reviews")]
    data = answers_part.read_bytes()
    answers_part.write_bytes(data[: len(data) // 3])  # truncated
    reviews_part.unlink()  # deleted

    status = runner.invoke(main, ["status", str(out), "--json"])
    assert status.exit_code == 0, status.output
    report = json.loads(status.stdout)
    assert report["quarantined"] == []  # a read-only command only skips the damaged part
    assert answers_part.is_file()
    assert report["missing_parts"] == {"reviews": [reviews_part.name]}
    assert report["total"]["pending"] == report["total"]["planned"]
    text = runner.invoke(main, ["status", str(out)])
    assert f"deleted: log/reviews/{reviews_part.name}" in text.output
    board = runner.invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert board.exit_code == 0 and "Traceback" not in board.output

    again = runner.invoke(main, ["run", str(yaml_path), "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout.strip().splitlines()[-1])
    assert summary["completed"] + summary["invalid"] == summary["planned"] == 6 + 36
    report = json.loads(runner.invoke(main, ["status", str(out), "--json"]).stdout)
    assert report["quarantined"] == [f"log/quarantine/answers/{answers_part.name}"]
    assert len(RunLog(out).ids("reviews")) == 36
    # `arena gc` removes parts on purpose: they are not reported as deleted.
    assert runner.invoke(main, ["gc", str(out)]).exit_code == 0
    assert (
        json.loads(runner.invoke(main, ["status", str(out), "--json"]).stdout)["missing_parts"]
        == {}
    )
