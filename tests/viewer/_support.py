"""A small sim run with every stage, whose log then holds texts crafted to inject script."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

import arena
from arena.cli import main
from tests.conftest import small_tournament

# Each part tries to run script: a tag, an event handler, a javascript: link.
# Run, any of them sets window.__pwned or changes the document's title.
PAYLOAD = (
    "<script>window.__pwned = 1; document.title = 'pwned'</script>"
    "<img src=x onerror=\"window.__pwned = 2; document.title = 'pwned'\">"
    '<a id="evil" href="javascript:window.__pwned=3">click me</a>'
    '<b onmouseover="window.__pwned = 4">bold?</b> & "quotes"'
)
QUESTIONS = [
    {"id": "q0", "category": "writing", "text": "Write a haiku about autumn."},
    {"id": "q1", "category": "math", "text": "What is 12 times 12?"},
    {"id": "q2", "category": "math", "text": "Is 91 prime?"},
    {"id": "q3", "category": "danger", "text": "Explain " + PAYLOAD},
]


def cli(*args: str) -> Any:
    """Run an `arena` command in this process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def make_run(tmp: Path, *, runs: int = 2) -> Path:
    """Run a 3-model tournament with discussion and BatchEval `runs` times; the run directory.

    Then one answer and one review of question q0 are rewritten with PAYLOAD
    (the log keeps the latest row per id), as a provider might have returned.
    """
    yaml_path = small_tournament(
        tmp,
        models=3,
        questions=4,
        sim={"judge_noise": 1.0},
        extra={
            "discussion": {
                "trigger": ["tie", "inconsistent"],
                "discussants": "top2",
                "allow_contestants": True,
            },
            "batcheval": {
                "scorers": ["m0"],
                "criteria": [
                    {"name": "helpfulness", "description": "Helps?", "scale": {"low": 1, "high": 3}}
                ],
                "batch_size": 6,
                "rounds": 2,
            },
        },
    )
    (tmp / "q.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    for night in range(runs):  # tagged: an unchanged night adds a history snapshot too
        result = cli("run", str(yaml_path), "--json", "--tag", f"night{night}")
        assert result.exit_code == 0, result.output
    out = Path(yaml.safe_load(yaml_path.read_text())["output"])
    inject(out)
    return out


def inject(directory: Path) -> None:
    """Rewrite the first answer and the first review of q0 with PAYLOAD."""
    log = arena.open_log(directory)
    answer = log.read("answers").filter(pl.col("question_id") == "q0").row(0, named=True)
    review = log.read("reviews").filter(pl.col("question_id") == "q0").row(0, named=True)
    answer["answer_turns"] = [PAYLOAD]
    review["text"] = PAYLOAD + "\nVerdict: [[A]]"
    review["verdict"] = "A"

    async def write() -> None:
        async with log.writer() as writer:
            await writer.write("answers", answer)
            await writer.write("reviews", review)

    asyncio.run(write())


class Viewer:
    """`arena view DIR --port 0` (or other arguments than DIR) in a subprocess; its URL."""

    def __init__(self, directory: Path | None, *args: str) -> None:
        source = [] if directory is None else [str(directory)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena", "view", *source, *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if match is None:
            self.close()
            raise AssertionError(f"arena view did not start: {line!r}")
        self.url = match.group(0)

    def close(self) -> int:
        """Stop it as Ctrl-C would; its exit code."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


_RUNS: dict[str, Path] = {}


def shared_run(factory: pytest.TempPathFactory) -> Path:
    """One `make_run` per test session, shared by the modules that only read it."""
    if "run" not in _RUNS:
        _RUNS["run"] = make_run(factory.mktemp("shared-run"))
    return _RUNS["run"]


class ThreadedViewer:
    """The viewer app of a run directory (or of `data`, a RunData) served from a thread of this
    process, on a free port."""

    def __init__(self, directory: Path, hosts: tuple[str, ...] = (), data: Any = None) -> None:
        from aiohttp import web

        from arena.viewer import RunData, make_app

        self._loop = asyncio.new_event_loop()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        self.data = RunData(directory) if data is None else data
        self._runner = web.AppRunner(make_app(self.data, hosts), access_log=None)
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._runner.setup())
            self._loop.run_until_complete(web.SockSite(self._runner, sock).start())
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(30)

    def close(self) -> None:
        """Stop serving and join the thread."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
