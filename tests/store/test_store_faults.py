"""Damaged logs: quarantined parts, deleted parts, every billed row kept, full disks."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
from pathlib import Path

import pytest

from arena.store import RunLog, StorageError
from arena.store._files import MANIFEST, list_parts

from .test_store_log import answer, review, write_rows


def _parts(directory: Path, table: str = "answers") -> list[Path]:
    return [path for _, path in list_parts(directory / "log", table)]


def test_a_damaged_part_is_quarantined_with_a_warning_and_its_rows_go_pending(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3)])
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3, 6)])
    first, second = _parts(tmp_path)
    data = second.read_bytes()
    second.write_bytes(data[: len(data) // 2])  # truncated, as by a crash of a copy
    moved = tmp_path / "log" / "quarantine" / "answers" / second.name
    # A read-only reader skips it with a warning and leaves it where it is.
    with caplog.at_level(logging.WARNING, logger="arena.store"):
        assert sorted(RunLog(tmp_path).read("answers")["id"]) == ["a-0", "a-1", "a-2"]
    assert second.is_file() and not moved.exists()
    assert any(
        str(second) in r.getMessage() and "skipped" in r.getMessage() for r in caplog.records
    )
    # A process that writes the log (`arena run`, `arena gc`) moves it aside.
    log = RunLog(tmp_path, repair=True)
    with caplog.at_level(logging.WARNING, logger="arena.store"):
        frame = log.read("answers")
    assert sorted(frame["id"]) == ["a-0", "a-1", "a-2"]
    assert moved.is_file() and not second.exists()
    assert any(str(moved) in r.getMessage() for r in caplog.records)
    assert log.ids("answers") == {"a-0", "a-1", "a-2"}  # a-3..a-5 are pending again
    assert log.missing_parts() == {}  # quarantined is not deleted
    # The next writer works and the calls logged again are read back.
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3, 6)])
    assert log.read("answers").height == 6


def test_reading_while_this_process_writes_the_log_moves_a_damaged_part(tmp_path: Path) -> None:
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3)])
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3, 6)])
    damaged = _parts(tmp_path)[1]
    damaged.write_bytes(b"not parquet at all")

    async def read_while_writing() -> set[str]:
        log = RunLog(tmp_path)
        async with log.writer():
            return log.ids("answers")

    assert asyncio.run(read_while_writing()) == {"a-0", "a-1", "a-2"}
    assert (tmp_path / "log" / "quarantine" / "answers" / damaged.name).is_file()


@pytest.mark.parametrize("where", ["read", "conform"])
def test_an_error_that_is_not_damage_never_moves_a_healthy_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    import arena.store._files as files

    write_rows(tmp_path, [("answers", answer(i)) for i in range(3)])
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3, 6)])
    parts = _parts(tmp_path)
    if where == "read":  # too many open files, as polars reports it
        error: Exception = OSError("Too many open files (os error 24)")
        monkeypatch.setattr(files.pl, "read_parquet", _raising(error))
    else:  # a bug in conforming rows to the schema
        error = ValueError("bug in conform")
        monkeypatch.setattr(files, "conform", _raising(error))
    for log in (RunLog(tmp_path), RunLog(tmp_path, repair=True)):
        with pytest.raises(type(error)):
            log.read("answers")
    assert _parts(tmp_path) == parts  # nothing moved, nothing skipped
    assert not (tmp_path / "log" / "quarantine").exists()


def _raising(error: Exception) -> object:
    def fail(*args: object, **kwargs: object) -> object:
        raise error

    return fail


def test_a_deleted_part_is_detected_from_the_manifest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_rows(tmp_path, [("answers", answer(0))])
    write_rows(tmp_path, [("answers", answer(1))])
    assert (tmp_path / "log" / "answers" / MANIFEST).is_file()
    gone = _parts(tmp_path)[0]
    gone.unlink()
    log = RunLog(tmp_path)
    with caplog.at_level(logging.WARNING, logger="arena.store"):
        assert log.ids("answers") == {"a-1"}
    assert log.missing_parts() == {"answers": [gone.name]}
    assert any(
        "was deleted" in r.getMessage() and gone.name in r.getMessage() for r in caplog.records
    )
    # A new writer keeps reporting it: the manifest is never shrunk.
    write_rows(tmp_path, [("answers", answer(2))])
    assert log.missing_parts() == {"answers": [gone.name]}


def test_superseded_rows_stay_in_the_log_and_in_the_spend(tmp_path: Path) -> None:
    failed = answer(1, status="failed", cost_usd=0.25, answer_turns=None, run_id="run-1")
    retried = answer(1, cost_usd=0.5, run_id="run-2")
    # The same journal (one writer), then a second run: both keep the failed row.
    write_rows(tmp_path, [("answers", failed), ("answers", retried), ("reviews", review(0))])
    write_rows(tmp_path, [("answers", answer(1, cost_usd=0.75, run_id="run-3"))])
    log = RunLog(tmp_path)
    assert log.read("answers").height == 1
    assert log.read_all("answers")["cost_usd"].to_list() == [0.25, 0.5, 0.75]
    assert log.spent_usd() == pytest.approx(0.25 + 0.5 + 0.75 + 0.01)


def test_a_full_disk_is_a_storage_error_naming_the_path_and_keeps_written_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_rows(tmp_path, [("answers", answer(0))])
    import arena.store._writer as writer_module

    real_write = writer_module.write_all

    def full(fd: int, data: bytes) -> None:
        real_write(fd, data[:5])  # a torn line, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    async def go() -> None:
        async with RunLog(tmp_path).writer() as w:
            await w.write("answers", answer(1))
            monkeypatch.setattr(writer_module, "write_all", full)
            with pytest.raises(StorageError, match="No space left"):
                await w.write("answers", answer(2))
            with pytest.raises(StorageError):
                await w.write("answers", answer(3))
            monkeypatch.setattr(writer_module, "write_all", real_write)
        raise AssertionError("close() must raise the storage error")

    with pytest.raises(StorageError) as closing:
        asyncio.run(go())
    assert "No space left on device" in str(closing.value)
    assert str(tmp_path / "log") in str(closing.value)
    assert RunLog(tmp_path).ids("answers") == {"a-0", "a-1"}
    write_rows(tmp_path, [("answers", answer(2))])  # recovered: the torn line is skipped
    assert RunLog(tmp_path).ids("answers") == {"a-0", "a-1", "a-2"}
