"""Regression tests of the nightly defects: a wedged directory, reports ending runs, gc
losing spend or re-paying a rollback, lost records, misleading diffs, --diff -2..-1."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import DEFAULT_REVIEW_TEMPLATE
from arena.rundir import describe_changes, read_history, snapshot_ids
from arena.store import RunLock, RunLog
from tests.conftest import small_tournament
from tests.rundir._support import cli, edit_yaml, priced, validate_record

REPO = Path(__file__).resolve().parents[2]
FLAKY = {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}}


def _night(yaml_path: Path, *extra: str) -> dict[str, Any]:
    """`arena run --json` in process (exceptions caught as the CLI would): the JSON line."""
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json", *extra])
    assert result.stdout.strip(), result.output
    line: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == result.exit_code, result.output
    validate_record(line["record"])
    assert line["record"]["exit_code"] == result.exit_code
    return line


def _add_down_model(data: dict[str, Any]) -> None:
    """A contestant whose every call fails (its provider is down)."""
    data["models"]["m3"] = {"provider": "sim", "sim": {"skill": 1.0, "failure_rate": 1.0}}
    data["contestants"].append("m3")


def test_a_contestant_down_one_night_is_unranked_and_the_next_night_runs(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, extra=FLAKY)
    out = tmp_path / "out"
    assert _night(yaml_path)["exit_code"] == 0
    edit_yaml(yaml_path, _add_down_model)
    down = _night(yaml_path)
    assert down["exit_code"] == 3
    history = read_history(out)
    last = history.filter(history["snapshot"] == snapshot_ids(history)[-1])
    m3 = last.filter(last["model"] == "m3").row(0, named=True)
    assert m3["rank"] is None and m3["bt"] is None  # unranked, not rank 4
    assert set(last["n_models"].to_list()) == {3}  # and not counted
    diff = json.loads(cli("leaderboard", str(out), "--diff", "--format", "json").stdout)
    assert {m["model"]: m["status"] for m in diff["models"]}["m3"] == "unranked"
    # The provider is back: the calls run, the report is written, nothing wedges.
    edit_yaml(yaml_path, lambda d: d["models"]["m3"]["sim"].update(failure_rate=0.0))
    back = _night(yaml_path)
    assert back["exit_code"] == 0 and back["completed"] > 0
    report = json.loads(Path(back["report"]).read_text())
    moves = {m["model"]: m for m in report["diff"]["models"]}
    assert moves["m3"]["status"] == "new" and moves["m3"]["rank_after"] is not None
    assert _night(yaml_path)["exit_code"] == 0
    assert cli("retry-failed", str(out), "--json").exit_code == 0
    text = cli("leaderboard", str(out), "--history")
    assert text.exit_code == 0 and "unranked" in text.stdout


def test_a_report_that_fails_is_logged_and_the_run_keeps_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise KeyError("a bug in the report")

    monkeypatch.setattr("arena.ops._report.night_report", broken)
    line = _night(yaml_path)
    assert line["exit_code"] == 0 and line["completed"] == 42
    report = json.loads(Path(line["report"]).read_text())  # the minimal report
    assert report["exit_code"] == 0 and report["record"]["run_id"] == line["run_id"]
    problems = (tmp_path / "out" / "reports" / "problems.log").read_text()
    assert "could not build the run report" in problems and "Traceback" in problems
    assert "KeyError: 'a bug in the report'" in problems


def _status_spend(out: Path) -> float:
    result = cli("status", str(out), "--json")
    assert result.exit_code == 0, result.output
    return float(json.loads(result.stdout)["total"]["spent_usd"])


def test_gc_keeps_what_was_spent(tmp_path: Path) -> None:
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        sim={"failure_rate": 0.2},
        extra={**priced(), "budget_usd": 1000.0},
    )
    out = tmp_path / "out"
    _night(yaml_path)
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=0.5))  # stale rows
    _night(yaml_path)
    before = _status_spend(out)
    logged = RunLog(out).spent_usd()
    assert before > 0 and logged == pytest.approx(before)
    gc = json.loads(cli("gc", str(out), "--json").stdout)
    assert gc["total"]["rows_stale"] > 0
    assert _status_spend(out) == pytest.approx(before)
    assert RunLog(out).spent_usd() == pytest.approx(logged)
    cli("gc", str(out), "--drop", "--json")
    assert _status_spend(out) == pytest.approx(before)
    # The tournament budget sees the same spend: nothing leaks after gc.
    plan = json.loads(cli("plan", str(yaml_path), "--json").stdout)
    assert plan["total"]["pending"] == 0


def test_a_rollback_after_gc_reuses_the_archived_calls(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, extra=priced())
    out = tmp_path / "out"
    t1 = _night(yaml_path)
    assert t1["completed"] == 42 and t1["spent_usd"] > 0
    template = tmp_path / "review.txt"
    template.write_text("Judge carefully.\n" + DEFAULT_REVIEW_TEMPLATE.read_text())
    edit_yaml(yaml_path, lambda d: d.update(review={"template": "review.txt"}))
    assert _night(yaml_path)["stale"] == 36
    assert cli("gc", str(out)).exit_code == 0
    assert list((out / "archive" / "reviews").glob("*.parquet"))
    edit_yaml(yaml_path, lambda d: d.pop("review"))
    back = _night(yaml_path)  # back to t1: its reviews are in the archive
    assert back["exit_code"] == 0
    assert (back["new"], back["stale"], back["completed"], back["spent_usd"]) == (0, 0, 0, 0.0)
    assert back["skipped"] == back["planned"] == 42
    board = json.loads(cli("leaderboard", str(out), "--format", "json").stdout)
    assert board["counts"]["reviews"] == 36


def _state_files(out: Path, metrics: Path) -> dict[str, bytes]:
    """Every file of DIR a run may write (the log aside), and the metrics file."""
    files = [p for p in out.rglob("*") if p.is_file() and "log" not in p.relative_to(out).parts]
    return {str(p): p.read_bytes() for p in [*files, metrics] if p.name != ".arena.lock.json"}


def test_every_early_exit_updates_last_run_json_and_a_held_lock_changes_nothing(
    tmp_path: Path,
) -> None:
    yaml_path = small_tournament(
        tmp_path, models=3, questions=2, extra={"metrics_file": "arena.prom"}
    )
    out = tmp_path / "out"
    first = _night(yaml_path)
    last = validate_record(json.loads((out / "last_run.json").read_text()))
    assert (last["run_id"], last["exit_code"]) == (first["run_id"], 0)
    before = _state_files(out, tmp_path / "arena.prom")
    lock = RunLock(out)
    lock.acquire()
    try:
        locked = _night(yaml_path)
    finally:
        lock.release()
    assert locked["exit_code"] == 75
    assert f"pid {os.getpid()} on host " in locked["error"] and "since 20" in locked["error"]
    record = validate_record(locked["record"])  # printed, with its status...
    assert (record["exit_code"], record["status"], record["report"]) == (75, "locked", None)
    # ...but nothing of the directory's state changed: last_run.json, the reports, the
    # alert state and the metrics are the holder's (exit 0 here), not the refused run's
    assert _state_files(out, tmp_path / "arena.prom") == before
    assert locked["report"] is None
    good = yaml_path.read_text()
    yaml_path.write_text(good.replace("contestants:", "contestant:"))
    bad = _night(yaml_path)
    last = validate_record(json.loads((out / "last_run.json").read_text()))
    assert (last["run_id"], last["exit_code"], last["status"]) == (bad["run_id"], 2, "bad_input")
    assert "contestants" in last["error"]


def test_a_crash_exits_1_with_a_record_and_its_traceback_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    _night(yaml_path)

    def crash(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("arena.cli._run.run_directory", crash)
    line = _night(yaml_path)
    assert line["exit_code"] == 1 and line["record"]["status"] == "crashed"
    assert "ZeroDivisionError: a bug" in line["error"]
    problems = (tmp_path / "out" / "reports" / "problems.log").read_text()
    assert "crashed" in problems and "Traceback" in problems


def test_a_night_without_a_new_snapshot_shows_no_diff_and_says_why(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, extra=priced())
    _night(yaml_path)
    with (tmp_path / "q.jsonl").open("a") as f:
        f.write('{"id": "q2", "text": "One more?"}\n')
    changed = _night(yaml_path)
    assert changed["record"]["snapshot"]["added"]
    assert json.loads(Path(changed["report"]).read_text())["diff"] is not None
    same = _night(yaml_path)  # nothing changed: no snapshot, and no diff shown as tonight's
    report = json.loads(Path(same["report"]).read_text())
    assert report["diff"] is None and not report["snapshot_added"]
    assert "nothing changed" in report["snapshot_note"]
    markdown = Path(same["report"]).with_suffix(".md").read_text()
    assert "This run added no snapshot: no new history snapshot: nothing changed" in markdown
    assert "questions q2 added" not in markdown and "question q2 added" not in markdown
    with (tmp_path / "q.jsonl").open("a") as f:
        f.write('{"id": "q3", "text": "And another?"}\n')
    stopped = _night(yaml_path, "--budget", "0")
    assert stopped["exit_code"] == 4
    report = json.loads(Path(stopped["report"]).read_text())
    assert report["diff"] is None and "budget" in report["snapshot_note"]
    assert stopped["record"]["snapshot"]["note"] == report["snapshot_note"]


def test_stale_calls_re_run_by_a_stopped_night_are_still_counted(tmp_path: Path) -> None:
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        extra={
            **priced(usd=1000.0),
            "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 1}}},
        },
    )
    out = tmp_path / "out"
    _night(yaml_path)
    template = tmp_path / "review.txt"
    template.write_text("Judge carefully.\n" + DEFAULT_REVIEW_TEMPLATE.read_text())
    edit_yaml(yaml_path, lambda d: d.update(review={"template": "review.txt"}))
    stopped = _night(yaml_path, "--budget", "2")  # some of the 36 stale reviews, then the budget
    assert stopped["exit_code"] == 4 and 0 < stopped["completed"] < 36
    finished = _night(yaml_path)
    assert finished["exit_code"] == 0 and finished["stale"] == 36 - stopped["completed"]
    diff = json.loads(cli("leaderboard", str(out), "--diff", "--format", "json").stdout)
    assert diff["changes"] == ["review template changed: 36 reviews re-run"]


def test_question_ids_are_labelled_and_in_natural_order() -> None:
    before = {"questions": {"1": "a", "8x": "b", "n2": "c"}}
    after = {
        "questions": {"1": "a", "n2": "changed", "10": "d", "9": "e", "8": "f"},
    }
    assert describe_changes(before, after) == [
        "question n2 edited, questions 8, 9 and 10 added, question 8x removed"
    ]


def test_diff_takes_negative_snapshot_numbers(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    _night(yaml_path)
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=0.5))
    _night(yaml_path)
    expected = cli("leaderboard", str(out), "--diff", "1..2", "--format", "json")
    for args in (["--diff=-2..-1"], ["--diff", "-2..-1"], ["--diff=-2"], ["--diff", "1..-1"]):
        result = cli("leaderboard", str(out), *args, "--format", "json")
        assert result.exit_code == 0, (args, result.output)
        assert json.loads(result.stdout)["models"] == json.loads(expected.stdout)["models"]
    bad = cli("leaderboard", str(out), "--diff=-9..-1")
    assert bad.exit_code == 2 and "no snapshot -9" in bad.output


def test_wall_seconds_is_the_whole_run_and_the_call_loop_is_apart(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    line = _night(yaml_path)
    record = line["record"]
    assert line["call_loop_seconds"] is not None and line["call_loop_seconds"] > 0
    assert line["wall_seconds"] >= line["call_loop_seconds"]
    assert record["wall_seconds"] >= record["call_loop_seconds"] > 0


def test_exit_code_1_is_in_every_exit_code_table() -> None:
    reference = (REPO / "docs" / "cli.md").read_text()
    section = reference.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^\| 1 \| ", section, re.M)
    nightly = (REPO / "docs" / "nightly.md").read_text()
    assert re.search(r"^\| 1 \| ", nightly, re.M)
    for args in ([], ["run"], ["retry-failed"]):
        text = CliRunner().invoke(main, [*args, "--help"]).output
        assert re.search(r"1\s+internal\s+error", text), args


def test_a_log_that_cannot_be_written_and_an_early_ctrl_c_leave_a_valid_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.store._writer as writer_module

    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    _night(yaml_path)
    with (tmp_path / "q.jsonl").open("a") as f:
        f.write('{"id": "q2", "text": "One more?"}\n')
    real_write = writer_module.write_all

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer_module, "write_all", full)
    storage = _night(yaml_path)
    assert storage["exit_code"] == 74 and storage["record"]["status"] == "storage"
    monkeypatch.setattr(writer_module, "write_all", real_write)
    last = validate_record(json.loads((out / "last_run.json").read_text()))
    assert last["exit_code"] == 74

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("arena.engine.preflight", interrupted)
    stopped = _night(yaml_path)
    assert stopped["exit_code"] == 130 and stopped["record"]["status"] == "interrupted"
    last = validate_record(json.loads((out / "last_run.json").read_text()))
    assert (last["run_id"], last["exit_code"]) == (stopped["run_id"], 130)
