"""RunLog and LogWriter in one process: schemas, round trips, dedupe, compaction, recovery."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

import arena.store
from arena.store import TABLES, LogWriter, RunLog, register_table
from arena.store._files import Compactor, journal_path, list_parts, list_sealed, sealed_path

COMMON = [
    "id",
    "status",
    "error",
    "provider",
    "tokens_in",
    "tokens_out",
    "cost_usd",
    "latency_s",
    "attempts",
    "started_at",
    "finished_at",
    "run_id",
    "usage_estimated",
    "tokens_cache_read",
    "tokens_cache_write",
    "tokens_reasoning",
]


def answer(i: int, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"a-{i}",
        "status": "ok",
        "error": None,
        "provider": "sim",
        "tokens_in": 10 + i,
        "tokens_out": 20 + i,
        "cost_usd": 0.5 * i,
        "latency_s": 1.25,
        "attempts": 1,
        "started_at": 1_700_000_000.5 + i,
        "finished_at": 1_700_000_001.5 + i,
        "run_id": "run-1",
        "usage_estimated": False,
        "tokens_cache_read": None,
        "tokens_cache_write": None,
        "tokens_reasoning": None,
        "question_id": f"q{i % 3}",
        "model": f"m{i % 2}",
        "answer_turns": [f"turn one of {i}", "turn two \n with newline, ünïcode"],
    }
    row.update(over)
    return row


def review(i: int, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"r-{i}",
        "status": "ok",
        "error": None,
        "provider": "sim",
        "tokens_in": 100,
        "tokens_out": 5,
        "cost_usd": 0.01,
        "latency_s": 0.2,
        "attempts": 2,
        "started_at": 1.0,
        "finished_at": 2.0,
        "run_id": "run-1",
        "usage_estimated": False,
        "tokens_cache_read": None,
        "tokens_cache_write": None,
        "tokens_reasoning": None,
        "question_id": "q1",
        "model_a": "m0",
        "model_b": "m1",
        "reviewer": "m2",
        "answer_a_id": "a-0",
        "answer_b_id": "a-1",
        "text": f"review {i}: [[A]]",
        "verdict": "A" if i % 2 else "tie",
        "p_a": None,
        "weight": None,
        "example_ids": None,
    }
    row.update(over)
    return row


def write_rows(
    directory: Path, rows: list[tuple[str, dict[str, Any]]], compact_every: int = 2000
) -> None:
    """Write rows one after another (deterministic batches) and close the writer."""

    async def go() -> None:
        async with RunLog(directory).writer(compact_every=compact_every) as w:
            for table, row in rows:
                await w.write(table, row)

    asyncio.run(go())


def rows_by_id(frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in frame.to_dicts()}


def test_public_api() -> None:
    assert set(arena.store.__all__) == {
        "RunLog",
        "LogWriter",
        "RunLock",
        "LockHeld",
        "TABLES",
        "register_table",
        "Column",
        "TableSchema",
        "StorageError",
        "storage_error",
        "failure_reason",
        "failure_reasons",
        "merge_reasons",
        "rewrite_tables",
        "Rewritten",
        "TOKEN_COLUMNS",
        "USAGE_DETAIL_COLUMNS",
        "describe_tokens",
        "token_totals",
        "usage_columns",
        "lock_holder",
        "LOG_FORMAT",
        "LOG_MANIFEST",
        "LogFormatError",
        "DIGEST_ID",
        "digest_key",
        "digest_keys",
        "digest_fingerprint",
        "digest_keys_of",
        "digest_order",
        "part_rows",
    }
    for name in arena.store.__all__:
        assert getattr(arena.store, name) is not None


def test_schemas_match_design() -> None:
    answers, reviews = TABLES["answers"], TABLES["reviews"]
    assert answers.names == [*COMMON, "question_id", "model", "answer_turns"]
    assert reviews.names == [
        *COMMON,
        "question_id",
        "model_a",
        "model_b",
        "reviewer",
        "answer_a_id",
        "answer_b_id",
        "text",
        "verdict",
        "p_a",
        "weight",
        "example_ids",
    ]
    # The Arrow types each Parquet part is written with.
    assert answers.arrow().field("answer_turns").type == pa.list_(pa.string())
    for schema in (answers.arrow(), reviews.arrow()):
        for col in ("started_at", "finished_at", "cost_usd", "latency_s"):
            assert schema.field(col).type == pa.float64()
        for col in ("tokens_in", "tokens_out", "attempts"):
            assert schema.field(col).type == pa.int64()
        assert schema.field("id").type == pa.string()


def test_empty_log_reads_empty_frames_with_schema(tmp_path: Path) -> None:
    log = RunLog(tmp_path / "run")
    assert (tmp_path / "run" / "log").is_dir()
    frame = log.read("reviews")
    assert frame.height == 0
    assert frame.columns == TABLES["reviews"].names
    assert frame.schema["tokens_in"] == pl.Int64
    assert log.read("answers").schema["answer_turns"] == pl.List(pl.String)
    assert log.ids("answers") == set()
    with pytest.raises(ValueError, match="unknown table 'nope'"):
        log.read("nope")


def test_round_trip_both_tables_journal_and_parts(tmp_path: Path) -> None:
    answers = [answer(i) for i in range(5)] + [
        answer(5, status="failed", error="permanent: boom", answer_turns=None)
    ]
    reviews = [review(i) for i in range(4)]
    log = RunLog(tmp_path)

    async def go() -> None:
        async with log.writer() as w:
            for a in answers:
                await w.write("answers", a)
            for r in reviews:
                await w.write("reviews", r)
            # Still in the live journal.
            assert rows_by_id(log.read("answers")) == {a["id"]: a for a in answers}
            assert rows_by_id(log.read("reviews")) == {r["id"]: r for r in reviews}

    asyncio.run(go())
    # Closing compacted everything into parts.
    assert not journal_path(log.log_dir, "answers").exists()
    assert len(list_parts(log.log_dir, "answers")) == 1
    assert len(list_parts(log.log_dir, "reviews")) == 1
    got = log.read("answers")
    assert got.columns == TABLES["answers"].names
    assert rows_by_id(got) == {a["id"]: a for a in answers}
    assert rows_by_id(log.read("reviews")) == {r["id"]: r for r in reviews}


def test_dedupe_keeps_last_row_per_id(tmp_path: Path) -> None:
    rows = [
        ("answers", answer(1, status="failed", attempts=1)),
        ("answers", answer(2)),
        ("answers", answer(1, status="invalid", attempts=2)),
        ("answers", answer(1, status="ok", attempts=3)),
    ]
    log = RunLog(tmp_path)

    async def go() -> None:
        async with log.writer() as w:
            for table, row in rows:
                await w.write(table, row)
            live = log.read("answers")
            assert live.height == 2
            assert rows_by_id(live)["a-1"]["attempts"] == 3

    asyncio.run(go())
    frame = log.read("answers")
    assert sorted(frame["id"].to_list()) == ["a-1", "a-2"]
    assert rows_by_id(frame)["a-1"]["attempts"] == 3
    assert log.ids("answers", statuses={"ok"}) == {"a-1", "a-2"}
    assert log.ids("answers", statuses={"failed", "invalid"}) == set()


def test_newer_files_win_by_key_across_parts_sealed_and_live(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    schema = log.read("answers").schema
    compactor = Compactor(log.log_dir)

    def part(key: int, *rows: dict[str, Any]) -> None:
        compactor.write_part("answers", key, pl.DataFrame(list(rows), schema=schema))

    def sealed(key: int, *rows: dict[str, Any]) -> None:
        text = "".join(json.dumps(r) + "\n" for r in rows)
        sealed_path(log.log_dir, "answers", key).write_text(text)

    part(1, answer(1, attempts=1), answer(2, attempts=1))
    part(2, answer(1, attempts=2))
    assert rows_by_id(log.read("answers"))["a-1"]["attempts"] == 2
    sealed(7, answer(2, attempts=5), answer(3, attempts=5))
    part(10, answer(3, attempts=7), answer(4, attempts=7))
    sealed(12, answer(4, attempts=8))
    journal_path(log.log_dir, "answers").write_text(json.dumps(answer(1, attempts=9)) + "\n")
    got = {k: v["attempts"] for k, v in rows_by_id(log.read("answers")).items()}
    assert got == {"a-1": 9, "a-2": 5, "a-3": 7, "a-4": 8}
    # Keys handed out later are later than every key on disk.
    assert compactor.next_key("answers") > 12


def test_missing_columns_are_null_and_unknown_columns_rejected(tmp_path: Path) -> None:
    log = RunLog(tmp_path)

    async def go() -> None:
        async with log.writer() as w:
            await w.write("answers", {"id": "a-x", "status": "failed"})
            with pytest.raises(ValueError, match=r"'answers'.*'colour'"):
                await w.write("answers", {"id": "a-y", "colour": "red"})
            with pytest.raises(ValueError, match=r"'reviews'.*'verdictt'"):
                await w.write("reviews", {"id": "r-y", "verdictt": "A"})
            with pytest.raises(ValueError, match="'tokens_in'"):
                await w.write("answers", {"id": "a-z", "tokens_in": "ten"})
            with pytest.raises(ValueError, match="'answer_turns'"):
                await w.write("answers", {"id": "a-z", "answer_turns": "not a list"})
            with pytest.raises(ValueError, match="'id'"):
                await w.write("answers", {"status": "ok"})
            with pytest.raises(ValueError, match="unknown table"):
                await w.write("battles", {"id": "b"})
            # The writer keeps working after rejected rows.
            await w.write("answers", {"id": "a-int-cost", "cost_usd": 2})

    asyncio.run(go())
    rows = rows_by_id(log.read("answers"))
    assert set(rows) == {"a-x", "a-int-cost"}
    assert rows["a-x"]["status"] == "failed"
    assert all(rows["a-x"][c] is None for c in TABLES["answers"].names if c not in ("id", "status"))
    assert rows["a-int-cost"]["cost_usd"] == 2.0


def test_compaction_every_n_rows_keeps_read_result(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    rows = [answer(i % 18, attempts=i) for i in range(25)]  # ids 0..6 rewritten
    expected = {r["id"]: r for r in rows}

    async def go() -> None:
        async with log.writer(compact_every=10) as w:
            for r in rows:
                await w.write("answers", r)
            # 25 sequential writes: sealed and compacted at 10 and 20.
            for _ in range(200):
                if not list_sealed(log.log_dir, "answers"):
                    break
                await asyncio.sleep(0.01)
            assert len(list_parts(log.log_dir, "answers")) == 2
            assert list_sealed(log.log_dir, "answers") == []
            live = journal_path(log.log_dir, "answers").read_bytes()
            assert live.count(b"\n") == 5
            assert rows_by_id(log.read("answers")) == expected

    asyncio.run(go())
    assert len(list_parts(log.log_dir, "answers")) == 3
    assert not journal_path(log.log_dir, "answers").exists()
    assert rows_by_id(log.read("answers")) == expected


def test_torn_trailing_line_is_skipped(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    journal = journal_path(log.log_dir, "answers")
    full = json.dumps(answer(1)) + "\n" + json.dumps(answer(2)) + "\n"
    torn = json.dumps(answer(3))[:40]
    journal.write_text(full + torn)
    assert set(log.ids("answers")) == {"a-1", "a-2"}
    # A complete object still missing its newline was never acknowledged: skipped too.
    journal.write_text(full + json.dumps(answer(3)))
    assert set(log.ids("answers")) == {"a-1", "a-2"}
    journal.write_text(full + torn)

    # A new writer seals the torn journal (never appends after the torn line).
    write_rows(tmp_path, [("answers", answer(4))])
    assert not journal.exists()
    assert rows_by_id(log.read("answers")) == {r["id"]: r for r in map(answer, (1, 2, 4))}


def test_unreadable_middle_line_is_skipped_with_warning(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    journal_path(log.log_dir, "answers").write_text(
        json.dumps(answer(1)) + "\n{garbage\n" + json.dumps(answer(2)) + "\n"
    )
    with pytest.warns(RuntimeWarning, match="skipped 1"):
        assert log.ids("answers") == {"a-1", "a-2"}


def test_recovery_of_leftover_sealed_journals(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    write_rows(tmp_path, [("answers", answer(i)) for i in range(3)])
    compactor = Compactor(log.log_dir)
    # A crash after a part was written but before its sealed journal was
    # deleted (the same rows in both places), a sealed journal never
    # compacted, and an unfinished temp part.
    both = sealed_path(log.log_dir, "answers", compactor.next_key("answers"))
    both.write_text("".join(json.dumps(answer(i)) + "\n" for i in range(2, 5)))
    compactor.compact("answers", both)
    both.write_text("".join(json.dumps(answer(i)) + "\n" for i in range(2, 5)))
    waiting = sealed_path(log.log_dir, "answers", compactor.next_key("answers"))
    waiting.write_text(json.dumps(answer(5)) + "\n" + json.dumps(answer(0, attempts=4)) + "\n")
    parts_dir = log.log_dir / "answers"
    tmp_part = parts_dir / ".tmp-part-00000000000000000001-x.parquet"
    tmp_part.write_bytes(b"PAR1 half written")
    assert len(list_parts(log.log_dir, "answers")) == 2
    expected = {r["id"]: r for r in map(answer, range(1, 6))}
    expected["a-0"] = answer(0, attempts=4)

    frame = log.read("answers")
    assert frame.height == 6 and frame["id"].n_unique() == 6
    assert rows_by_id(frame) == expected
    # Every write once: the rows in both the part and its journal count once.
    every = log.read_all("answers", ["attempts", "started_at"])
    assert sorted(every["id"].to_list()) == ["a-0", "a-0", "a-1", "a-2", "a-3", "a-4", "a-5"]

    async def start_and_stop() -> None:
        w = LogWriter(tmp_path)
        await w.start()
        # Recovery ran before start() returned.
        assert list_sealed(log.log_dir, "answers") == []
        assert not tmp_part.exists()
        await w.close()

    asyncio.run(start_and_stop())
    assert len(list_parts(log.log_dir, "answers")) == 4
    assert sorted(set(os.listdir(parts_dir)) - {"manifest.json"}) == [
        p.name for _, p in list_parts(log.log_dir, "answers")
    ]
    assert rows_by_id(log.read("answers")) == expected


def test_concurrent_writes_are_group_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = RunLog(tmp_path)
    fsyncs = 0
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        nonlocal fsyncs
        fsyncs += 1
        real_fsync(fd)

    async def go() -> None:
        async with log.writer() as w:
            monkeypatch.setattr(os, "fsync", counting_fsync)
            await asyncio.gather(
                *(w.write("answers", answer(i)) for i in range(600)),
                *(w.write("reviews", review(i)) for i in range(400)),
            )
            monkeypatch.setattr(os, "fsync", real_fsync)
            assert log.ids("answers") == {f"a-{i}" for i in range(600)}
            assert len(log.ids("reviews")) == 400

    asyncio.run(go())
    # 1000 writes shared a handful of fsyncs (one per table per batch).
    assert 2 <= fsyncs < 50
    assert log.read("answers").height == 600
    assert log.read("reviews").height == 400


def test_writer_misuse(tmp_path: Path) -> None:
    async def go() -> None:
        w = LogWriter(tmp_path)
        with pytest.raises(RuntimeError, match="not open"):
            await w.write("answers", answer(1))
        async with w:
            other = RunLog(tmp_path).writer()
            with pytest.raises(RuntimeError, match="another LogWriter"):
                await other.start()
        with pytest.raises(RuntimeError, match="closed"):
            await w.write("answers", answer(1))
        # The folder is free again once the first writer closed.
        async with RunLog(tmp_path).writer() as again:
            await again.write("answers", answer(2))

    asyncio.run(go())
    assert RunLog(tmp_path).ids("answers") == {"a-2"}
    with pytest.raises(ValueError):
        LogWriter(tmp_path, compact_every=0)


@pytest.fixture
def extra_table() -> Iterator[str]:
    name = "discussions_test"
    yield name
    TABLES.pop(name, None)


def test_register_table(tmp_path: Path, extra_table: str) -> None:
    schema = pa.schema([("id", pa.string()), ("round", pa.int64()), ("done", pa.bool_())])
    log = RunLog(tmp_path)

    async def go() -> None:
        async with log.writer(compact_every=3) as w:
            await w.write("answers", answer(1))
            # Registered after the writer started: recovered lazily on first write.
            register_table(extra_table, schema)
            register_table(extra_table, schema)  # same schema again: fine
            for i in range(4):
                await w.write(extra_table, {"id": f"d-{i}", "round": i})
            await w.write(extra_table, {"id": "d-0", "round": 10, "done": True})

    asyncio.run(go())
    frame = log.read(extra_table)
    assert frame.schema == pl.Schema({"id": pl.String, "round": pl.Int64, "done": pl.Boolean})
    assert rows_by_id(frame)["d-0"] == {"id": "d-0", "round": 10, "done": True}
    assert rows_by_id(frame)["d-3"] == {"id": "d-3", "round": 3, "done": None}
    with pytest.raises(ValueError, match="different schema"):
        register_table(extra_table, pa.schema([("id", pa.string())]))
    with pytest.raises(ValueError, match="invalid table name"):
        register_table("Bad.Name", schema)
    with pytest.raises(ValueError, match="'id'"):
        register_table("no_id", pa.schema([("key", pa.string())]))


def test_read_orders_live_journal_sealed_during_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer seals and compacts the live journal right after a reader read it."""
    import arena.store._log as log_module

    log = RunLog(tmp_path)
    compactor = Compactor(log.log_dir)
    live = journal_path(log.log_dir, "answers")
    live.write_text(json.dumps(answer(1, attempts=2)) + "\n")
    real_parse = log_module.parse_journal
    calls = 0

    def parse_then_writer_moves_on(
        table: str, data: bytes, path: Path | None = None
    ) -> pl.DataFrame:
        nonlocal calls
        calls += 1
        frame = real_parse(table, data, path)
        if calls == 1:
            with live.open("a") as f:  # one more version, then sealed and compacted
                f.write(json.dumps(answer(1, attempts=3)) + "\n")
            compactor.compact("answers", compactor.seal("answers"))
            live.write_text(json.dumps(answer(2, attempts=1)) + "\n")
        return frame

    monkeypatch.setattr(log_module, "parse_journal", parse_then_writer_moves_on)
    got = rows_by_id(log.read("answers"))
    assert got["a-1"]["attempts"] == 3  # the stale live read (2) must not win


def test_read_retries_when_live_journal_is_sealed_while_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.store._log as log_module

    log = RunLog(tmp_path)
    compactor = Compactor(log.log_dir)
    live = journal_path(log.log_dir, "answers")
    live.write_text(json.dumps(answer(1, attempts=1)) + "\n")
    real_max_key = log_module.max_key
    calls = 0

    def writer_seals_first(log_dir: Path, table: str) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            with live.open("a") as f:
                f.write(json.dumps(answer(1, attempts=5)) + "\n")
            compactor.seal("answers")  # left sealed, not compacted
            live.write_text(json.dumps(answer(2, attempts=1)) + "\n")
        return real_max_key(log_dir, table)

    monkeypatch.setattr(log_module, "max_key", writer_seals_first)
    got = rows_by_id(log.read("answers"))
    assert calls == 2  # the first pass noticed the rename and started over
    assert {k: v["attempts"] for k, v in got.items()} == {"a-1": 5, "a-2": 1}


def test_register_table_of_columns_writes_the_arrow_types(tmp_path: Path, extra_table: str) -> None:
    import pyarrow.parquet as pq

    from arena.store._files import list_parts
    from arena.store._schema import Column, TableSchema

    schema = TableSchema(
        [
            Column("id", pl.String, nullable=False),
            Column("round", pl.Int64),
            Column("score", pl.Float64),
            Column("done", pl.Boolean),
            Column("tags", pl.List(pl.String)),
        ]
    )
    register_table(extra_table, schema)
    assert TABLES[extra_table] is schema
    # The same columns given as pyarrow's schema are the same table.
    register_table(extra_table, schema.arrow())
    assert schema.arrow() == pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("round", pa.int64()),
            pa.field("score", pa.float64()),
            pa.field("done", pa.bool_()),
            pa.field("tags", pa.list_(pa.string())),
        ]
    )
    log = RunLog(tmp_path)

    async def go() -> None:
        async with log.writer(compact_every=2) as w:
            await w.write(extra_table, {"id": "x-1", "round": 1, "score": 2, "tags": ["a"]})
            await w.write(extra_table, {"id": "x-2", "done": True})
            with pytest.raises(ValueError, match="column 'round': expected an integer"):
                await w.write(extra_table, {"id": "x-3", "round": "one"})

    asyncio.run(go())
    frame = log.read(extra_table)
    assert frame.schema == schema.polars
    assert rows_by_id(frame)["x-1"] == {
        "id": "x-1",
        "round": 1,
        "score": 2.0,
        "done": None,
        "tags": ["a"],
    }
    parts = list_parts(tmp_path / "log", extra_table)
    assert parts and pq.read_schema(parts[0][1]).field("tags").type == pa.list_(pa.string())
    with pytest.raises(ValueError, match="different schema"):
        register_table(extra_table, TableSchema([Column("id", pl.String)]))
