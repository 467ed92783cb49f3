"""The log and the lock across processes: kill -9, reads during writes, killed lock holders."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.store import LockHeld, RunLock, RunLog
from arena.store._files import journal_path, list_parts, list_sealed

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("_writer_child.py")
DURABLE = re.compile(r"^durable (\S+) (\d+)\n$")

pytestmark = pytest.mark.slow


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


class WriterChild:
    """A `_writer_child.py` process and the versions it reported durable."""

    def __init__(self, directory: Path, compact_every: int, base: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(directory), str(compact_every), str(base)],
            cwd=REPO,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.durable: dict[str, int] = {}
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._collect, daemon=True)
        self.reader.start()

    def _collect(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace")
            if line == "ready\n":
                self.ready.set()
            match = DURABLE.match(line)
            if match:
                with self.lock:
                    key, version = match[1], int(match[2])
                    self.durable[key] = max(self.durable.get(key, -1), version)

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.durable)

    def wait_ready(self) -> None:
        if not self.ready.wait(30):
            self.proc.kill()
            stderr = self.proc.stderr.read().decode() if self.proc.stderr else ""
            pytest.fail(f"writer child never got ready:\n{stderr}")

    def wait_durable(self) -> None:
        """Wait for the first durable row, so a slow (loaded) machine still kills mid-writes."""
        deadline = time.monotonic() + 30
        while not self.snapshot() and time.monotonic() < deadline:
            time.sleep(0.01)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.reader.join(10)
        assert self.proc.returncode == -signal.SIGKILL


def check_covers(log: RunLog, durable: dict[str, int]) -> int:
    """Assert every durable row is readable at its latest durable version; return rows."""
    frame = log.read("answers")
    assert frame["id"].n_unique() == frame.height, "duplicate ids"
    versions = dict(zip(frame["id"].to_list(), frame["attempts"].to_list(), strict=True))
    missing = [key for key in durable if key not in versions]
    assert not missing, f"durable ids lost: {missing[:5]}"
    stale = {k: (versions[k], v) for k, v in durable.items() if versions[k] < v}
    assert not stale, f"read older versions than durable: {list(stale.items())[:5]}"
    return frame.height


def test_kill_9_during_writes_loses_no_durable_row(tmp_path: Path) -> None:
    rng = random.Random()
    log = RunLog(tmp_path)
    durable: dict[str, int] = {}
    for attempt in range(3):
        # Small journals so kills land in sealing and compaction too.
        child = WriterChild(tmp_path, compact_every=rng.choice([23, 57, 131]), base=attempt * 10**6)
        child.wait_ready()
        child.wait_durable()
        time.sleep(rng.uniform(0.05, 0.6))
        child.kill()
        reported = child.snapshot()
        assert reported, "child wrote nothing before the kill"
        for key, version in reported.items():
            durable[key] = max(durable.get(key, -1), version)
        # Read straight after the crash (the next child recovers what it left).
        check_covers(log, durable)

    before = log.read("answers").sort("id")

    async def recover() -> None:
        async with log.writer():
            pass

    asyncio.run(recover())
    assert list_sealed(log.log_dir, "answers") == []
    assert not journal_path(log.log_dir, "answers").exists()
    assert list_parts(log.log_dir, "answers")
    after = log.read("answers").sort("id")
    assert after.equals(before)
    check_covers(log, durable)


def test_read_while_another_process_writes(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    child = WriterChild(tmp_path, compact_every=50, base=0)
    try:
        child.wait_ready()
        reads = 0
        rows = 0
        # At least 2.5 s of reads; on a loaded machine, on until five reads saw a
        # compaction (a bound of 60 s, not a timing assertion).
        start = time.monotonic()
        while time.monotonic() - start < 2.5 or (
            time.monotonic() - start < 60
            and (reads < 5 or len(list_parts(log.log_dir, "answers")) <= 1)
        ):
            durable = child.snapshot()
            rows = check_covers(log, durable)
            reads += 1
        assert child.proc.poll() is None, "writer child died"
        assert reads >= 5
        assert rows > 0
        assert len(list_parts(log.log_dir, "answers")) > 1, "no compaction happened while reading"
    finally:
        child.kill()


def test_lock_held_by_another_run(tmp_path: Path) -> None:
    with RunLock(tmp_path) as lock:
        assert lock.is_locked
        with pytest.raises(LockHeld, match=re.escape(str(tmp_path))):
            with RunLock(tmp_path):
                pass
    with RunLock(tmp_path):
        pass
    assert (tmp_path / ".arena.lock").exists()


HOLD_LOCK = """
import sys, time
from arena.store import RunLock
lock = RunLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
time.sleep(120)
"""


def test_lock_is_free_after_holder_is_killed(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"locked\n"
        with pytest.raises(LockHeld) as info:
            RunLock(tmp_path).acquire()
        assert str(tmp_path) in str(info.value)
        assert info.value.directory == tmp_path
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    # flock died with its holder: taken at once (timeout 0), no stale-lock wait.
    with RunLock(tmp_path) as lock:
        assert lock.is_locked
