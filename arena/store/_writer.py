"""The one writer of a run log: group-committed journal appends and compaction."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from arena.store._files import (
    Compactor,
    PartialWrite,
    fsync_dir,
    journal_path,
    storage_error,
    write_all,
)
from arena.store._format import record_format
from arena.store._schema import TABLES, normalize_row

__all__ = ["LogWriter"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# A lone UTF-16 surrogate: a str may hold one (a JSON "\ud800" decodes to it),
# UTF-8 cannot, so it is replaced before a row is encoded.
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"

log = logging.getLogger("arena.store")

# Log folders with a started writer in this process (another process is kept
# out by RunLock).
_ACTIVE: set[Path] = set()


def writer_active(log_dir: Path) -> bool:
    """Whether this process has a started writer on the log folder `log_dir`."""
    return log_dir.resolve() in _ACTIVE


@dataclass
class _Journal:
    """The writer's state of one table's live journal."""

    fd: int | None = None
    rows: int = 0


@dataclass
class _Pending:
    table: str
    line: bytes
    done: asyncio.Future[None]


class _AppendFailed(Exception):
    """A group commit failed; `durable` counts, per table, the lines that landed first."""

    def __init__(self, cause: Exception, durable: dict[str, int]) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.durable = durable


def _whole_lines(lines: list[bytes], written: int, fd: int) -> int:
    """How many of `lines` lie whole in the first `written` bytes, once fsync'd (0 if not)."""
    whole = 0
    for line in lines:
        if written < len(line):
            break
        written -= len(line)
        whole += 1
    if whole:
        try:
            os.fsync(fd)
        except OSError:
            return 0  # not durable: the rows count as not logged
    return whole


class LogWriter:
    """Appends rows to the run log of `directory`; `await write(...)` returns once durable.

    Concurrent writes are group-committed: one background task takes every
    queued line, appends and fsyncs each touched journal once (in a worker
    thread), then wakes all the writers. A journal holding `compact_every`
    rows is sealed and compacted into a Parquet part by a second background
    task; at close every journal is sealed and compacted.

    Starting the writer first recovers what a crashed writer left behind.
    Use it as `async with RunLog(dir).writer() as w:`. When the disk is full,
    read-only or not writable, `start`, `write` and `close` raise
    `StorageError` naming the path; every row written before stays durable.
    """

    def __init__(self, directory: str | os.PathLike[str], *, compact_every: int = 2000) -> None:
        if compact_every < 1:
            raise ValueError(f"compact_every must be at least 1, got {compact_every}")
        self.log_dir = Path(directory) / "log"
        self.compact_every = compact_every
        self._compactor = Compactor(self.log_dir)
        self._journals: dict[str, _Journal] = {}
        self._pending: list[_Pending] = []
        self._wakeup: asyncio.Event | None = None
        self._to_compact: asyncio.Queue[tuple[str, Path] | None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._state = "new"  # new -> open -> closing -> closed
        self._error: BaseException | None = None
        self._key: Path | None = None
        # Lone surrogates replaced with U+FFFD in rows written (see `write`).
        self.replaced_chars = 0

    async def __aenter__(self) -> LogWriter:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close(raise_errors=exc is None)

    async def start(self) -> None:
        """Recover leftovers of a crashed writer and start the background tasks."""
        if self._state != "new":
            raise RuntimeError("a LogWriter can be started only once")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        key = self.log_dir.resolve()
        if key in _ACTIVE:
            raise RuntimeError(f"another LogWriter of this process is writing {self.log_dir}")
        _ACTIVE.add(key)
        self._key = key
        try:
            await asyncio.to_thread(self._recover, list(TABLES))
        except BaseException as exc:
            _ACTIVE.discard(key)
            storage = storage_error(exc, self.log_dir)
            if storage is not None:
                raise storage from exc
            raise
        self._wakeup = asyncio.Event()
        self._to_compact = asyncio.Queue()
        self._tasks = [
            asyncio.create_task(self._commit_loop(), name="arena-log-commit"),
            asyncio.create_task(self._compact_loop(), name="arena-log-compact"),
        ]
        self._state = "open"

    async def write(self, table: str, row: Mapping[str, Any]) -> None:
        """Append one row to a table; returns once it is fsync'd to disk.

        A lone UTF-16 surrogate in a text (UTF-8 cannot hold it) is replaced
        with U+FFFD, counted in `replaced_chars` and warned about.
        """
        if self._state != "open":
            raise RuntimeError(f"LogWriter is {self._state}, not open")
        if self._error is not None:
            storage = storage_error(self._error, self.log_dir)
            if storage is not None:
                raise storage from self._error
            raise RuntimeError(f"LogWriter failed earlier: {self._error}") from self._error
        clean = normalize_row(table, row)
        text = _ENCODER.encode(clean) + "\n"
        try:
            line = text.encode()
        except UnicodeEncodeError:
            line = self._replace_surrogates(table, clean)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append(_Pending(table, line, done))
        assert self._wakeup is not None
        self._wakeup.set()
        await done

    async def close(self, *, raise_errors: bool = True) -> None:
        """Commit queued rows, compact every journal, stop the background tasks."""
        if self._state in ("new", "closed"):
            self._state = "closed"
            return
        self._state = "closing"
        assert self._wakeup is not None and self._to_compact is not None
        commit_task, compact_task = self._tasks
        try:
            self._wakeup.set()
            await commit_task
            if self._error is None:
                try:
                    for item in await asyncio.to_thread(self._seal_all):
                        self._to_compact.put_nowait(item)
                except Exception as exc:
                    self._error = exc
            self._to_compact.put_nowait(None)
            await compact_task
        finally:
            for task in self._tasks:
                task.cancel()
            self._close_fds()
            self._state = "closed"
            if self._key is not None:
                _ACTIVE.discard(self._key)
        if raise_errors and self._error is not None:
            storage = storage_error(self._error, self.log_dir)
            if storage is not None:
                raise storage from self._error
            raise RuntimeError(f"LogWriter failed: {self._error}") from self._error

    def _replace_surrogates(self, table: str, row: dict[str, Any]) -> bytes:
        """The row's line with every lone surrogate replaced by U+FFFD (counted, warned)."""
        replaced = 0

        def fix(value: Any) -> Any:
            nonlocal replaced
            if isinstance(value, str):
                value, n = _SURROGATE.subn(REPLACEMENT, value)
                replaced += n
            elif isinstance(value, list):
                value = [fix(item) for item in value]
            return value

        clean = {column: fix(value) for column, value in row.items()}
        self.replaced_chars += replaced
        log.warning(
            "table %s row %s: %d lone surrogate(s) (not valid Unicode) replaced with U+FFFD",
            table,
            clean["id"],
            replaced,
        )
        return (_ENCODER.encode(clean) + "\n").encode()

    # --- background tasks -------------------------------------------------

    async def _commit_loop(self) -> None:
        assert self._wakeup is not None and self._to_compact is not None
        while True:
            if not self._pending:
                if self._state != "open":
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch, self._pending = self._pending, []
            by_table: dict[str, list[bytes]] = {}
            for item in batch:
                by_table.setdefault(item.table, []).append(item.line)
            try:
                sealed = await asyncio.to_thread(self._append, by_table)
            except _AppendFailed as failed:
                exc = storage_error(failed.cause, self.log_dir) or failed.cause
                self._error = exc
                # Rows whose line reached the file (and was fsync'd) are logged:
                # their writers return normally, so the run counts them.
                landed = dict(failed.durable)
                for item in batch:
                    if landed.get(item.table, 0) > 0 and not item.done.done():
                        landed[item.table] -= 1
                        item.done.set_result(None)
                for item in [*batch, *self._pending]:
                    if not item.done.done():
                        item.done.set_exception(exc)
                self._pending = []
                return
            for item in batch:
                if not item.done.done():
                    item.done.set_result(None)
            for entry in sealed:
                self._to_compact.put_nowait(entry)

    async def _compact_loop(self) -> None:
        # One sealed journal at a time, in sealing order, off the commit path.
        assert self._to_compact is not None
        while True:
            entry = await self._to_compact.get()
            if entry is None:
                return
            if self._error is not None:
                continue  # left on disk; the next writer's recovery compacts it
            try:
                await asyncio.to_thread(self._compactor.compact, *entry)
            except Exception as exc:
                self._error = storage_error(exc, self.log_dir) or exc

    # --- worker-thread code ----------------------------------------------

    def _recover(self, tables: list[str]) -> None:
        record_format(self.log_dir)  # a newer format: LogFormatError, nothing touched
        for table in tables:
            self._compactor.recover(table)
            self._journals[table] = _Journal()

    def _append(self, by_table: dict[str, list[bytes]]) -> list[tuple[str, Path]]:
        """Append and fsync each table's lines; `_AppendFailed` says which ones landed."""
        sealed: list[tuple[str, Path]] = []
        durable: dict[str, int] = {}
        for table, lines in by_table.items():
            try:
                journal = self._journals.get(table)
                if journal is None:  # registered after the writer started
                    self._recover([table])
                    journal = self._journals[table]
                if journal.fd is None:
                    journal.fd = os.open(
                        journal_path(self.log_dir, table),
                        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                        0o644,
                    )
                    fsync_dir(self.log_dir)
                try:
                    write_all(journal.fd, b"".join(lines))
                except PartialWrite as exc:
                    durable[table] = _whole_lines(lines, exc.written, journal.fd)
                    raise
                os.fsync(journal.fd)
            except Exception as exc:
                raise _AppendFailed(exc, durable) from exc
            durable[table] = len(lines)
            journal.rows += len(lines)
            if journal.rows >= self.compact_every:
                sealed.append((table, self._seal(table, journal)))
        return sealed

    def _seal(self, table: str, journal: _Journal) -> Path:
        assert journal.fd is not None
        os.close(journal.fd)
        journal.fd = None
        journal.rows = 0
        return self._compactor.seal(table)

    def _seal_all(self) -> list[tuple[str, Path]]:
        return [
            (table, self._seal(table, journal))
            for table, journal in self._journals.items()
            if journal.fd is not None and journal.rows > 0
        ]

    def _close_fds(self) -> None:
        for journal in self._journals.values():
            if journal.fd is not None:
                os.close(journal.fd)
                journal.fd = None
