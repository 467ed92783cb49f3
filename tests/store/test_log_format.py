"""The log's format version (`DIR/log/manifest.json`): recorded by writers, a newer one
refused before anything is read or written, an unversioned one read through its adapter."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.errors import ArenaStorageError
from arena.store import LOG_FORMAT, LOG_MANIFEST, LogFormatError, RunLog
from tests.conftest import small_tournament


def _row(i: int) -> dict[str, object]:
    return {
        "id": f"a{i}",
        "status": "ok",
        "provider": "sim",
        "question_id": f"q{i}",
        "model": "m0",
        "answer_turns": [f"answer {i}"],
        "cost_usd": 0.0,
    }


async def _write(directory: Path, *rows: dict[str, object]) -> None:
    async with RunLog(directory).writer() as w:
        for row in rows:
            await w.write("answers", row)


def _unversioned_log(directory: Path) -> None:
    """A log as arena wrote it before versions: a part and a journal whose rows lack the
    columns added since (usage details), and no log manifest."""
    log = directory / "log"
    (log / "answers").mkdir(parents=True)
    old = pa.table(
        {
            "id": ["a1"],
            "status": ["ok"],
            "provider": ["sim"],
            "question_id": ["q1"],
            "model": ["m0"],
            "answer_turns": [["answer 1"]],
            "cost_usd": [0.25],
        }
    )
    name = "part-00000000000000000001-" + "0" * 32 + ".parquet"
    pq.write_table(old, log / "answers" / name)
    (log / "answers" / "manifest.json").write_text(json.dumps({"parts": [name]}))
    (log / "answers.journal.jsonl").write_text(json.dumps(_row(2)) + "\n")


def test_a_writer_records_the_format(tmp_path: Path) -> None:
    asyncio.run(_write(tmp_path, _row(1)))
    manifest = json.loads((tmp_path / "log" / LOG_MANIFEST).read_text())
    assert manifest == {"format": LOG_FORMAT}
    assert RunLog(tmp_path).format == LOG_FORMAT


def test_an_unversioned_log_is_read_with_the_new_columns_null(tmp_path: Path) -> None:
    _unversioned_log(tmp_path)
    log = RunLog(tmp_path)
    assert log.format == 0
    rows = log.read("answers").sort("id")
    assert rows["id"].to_list() == ["a1", "a2"]
    assert rows["cost_usd"].to_list() == [0.25, 0.0]
    assert rows["usage_estimated"].to_list() == [None, None]
    assert rows["tokens_reasoning"].to_list() == [None, None]
    assert log.spent_usd() == pytest.approx(0.25)
    assert not (tmp_path / "log" / LOG_MANIFEST).exists()  # a reader changes nothing


def test_a_writer_upgrades_an_unversioned_log_in_place(tmp_path: Path) -> None:
    _unversioned_log(tmp_path)
    asyncio.run(_write(tmp_path, _row(3)))
    log = RunLog(tmp_path)
    assert log.format == LOG_FORMAT
    assert sorted(log.read("answers")["id"].to_list()) == ["a1", "a2", "a3"]


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        (json.dumps({"format": LOG_FORMAT + 1}), f"written in format {LOG_FORMAT + 1}"),
        ("{not json", "not JSON"),
        (json.dumps({"parts": []}), "no format version"),
        (json.dumps({"format": True}), "no format version"),
    ],
)
def test_a_log_this_arena_cannot_read_is_refused_untouched(
    tmp_path: Path, manifest: str, problem: str
) -> None:
    _unversioned_log(tmp_path)
    (tmp_path / "log" / LOG_MANIFEST).write_text(manifest)
    before = sorted(p.name for p in (tmp_path / "log").rglob("*"))
    with pytest.raises(LogFormatError) as read:
        RunLog(tmp_path)
    assert problem in str(read.value)
    assert str(tmp_path / "log" / LOG_MANIFEST) in str(read.value)
    assert isinstance(read.value, ArenaStorageError)
    with pytest.raises(LogFormatError):
        asyncio.run(_write(tmp_path, _row(3)))
    # The live journal was not sealed, nothing compacted or written.
    assert sorted(p.name for p in (tmp_path / "log").rglob("*")) == before


def test_the_cli_exits_2_on_a_newer_log_before_any_call(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path)
    log = tmp_path / "out" / "log"
    log.mkdir(parents=True)
    (log / LOG_MANIFEST).write_text(json.dumps({"format": LOG_FORMAT + 1}))
    runner = CliRunner()
    for args in (
        ["run", str(yaml_path)],
        ["leaderboard", str(tmp_path / "out")],
        ["status", str(tmp_path / "out")],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert "by a newer arena" in result.output, args
        assert "Traceback" not in result.output
    assert not list(log.glob("*.journal*"))  # no call was made, no row written
