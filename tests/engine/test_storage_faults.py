"""A log that cannot be written ends with a clear message and exit 74, nothing logged lost."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import arena.store._writer as writer_module
from arena.cli import main
from arena.store import RunLog
from tests.conftest import small_tournament


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_disk_full_or_read_only_mid_run_exits_74_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=3, sim={"latency_mean": 0.01})
    real_write = writer_module.write_all
    writes = {"n": 0}

    def failing(fd: int, data: bytes) -> None:
        writes["n"] += 1
        if writes["n"] > 2:  # two group commits land, then the disk refuses
            raise OSError(code, os.strerror(code))
        real_write(fd, data)

    monkeypatch.setattr(writer_module, "write_all", failing)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 74, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["exit_code"] == 74
    assert report["planned"] == 9 + 54 and report["pending"] > 0  # the run's summary
    assert str(tmp_path / "out" / "log") in report["error"]
    assert os.strerror(code) in report["error"]
    monkeypatch.setattr(writer_module, "write_all", real_write)
    logged = RunLog(tmp_path / "out").ids("answers") | RunLog(tmp_path / "out").ids("reviews")
    assert logged  # what was logged before the fault is still there
    # The next run (disk fixed) resumes and completes.
    again = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout.strip().splitlines()[-1])["skipped"] >= len(logged)


def test_ctrl_c_during_start_up_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml_path = small_tournament(tmp_path)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("arena.engine.preflight", interrupted)
    result = CliRunner().invoke(main, ["run", str(yaml_path)])
    assert result.exit_code == 130, result.output


def test_a_disk_that_fills_mid_commit_counts_every_row_that_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=4, multi_turn=True)
    real_write = os.write
    state = {"multi": 0, "full": False}

    def filling(fd: int, data: bytes | memoryview) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if not target.endswith(".journal.jsonl"):
            return real_write(fd, data)
        if state["full"]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        lines = bytes(data).count(b"\n")
        if lines >= 2:
            state["multi"] += 1
            if state["multi"] == 2:  # this group commit fills the disk inside its last row
                state["full"] = True
                cut = bytes(data).rstrip(b"\n").rfind(b"\n") + 10
                return real_write(fd, bytes(data)[:cut])
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", filling)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    monkeypatch.setattr(os, "write", real_write)
    assert result.exit_code == 74, result.output
    assert state["full"]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    log = RunLog(tmp_path / "out")
    final = 0
    for table in ("answers", "reviews"):
        rows = log.read(table)
        final += rows.filter(rows["status"] != "partial").height
    assert final > 0
    # The summary counts what was logged: every final row of this run.
    assert report["completed"] + report["invalid"] + report["failed"] == final
