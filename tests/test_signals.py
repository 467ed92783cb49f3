"""SIGINT and SIGTERM at any moment of `arena run --json`, from the program's start
(while its modules import) to its exit: one JSON line, an exit code that is the
record's, a record that says so, and a following run that keeps it (issue 46).

Each case runs the real program (`arena.__main__.program`, as the `arena` command
does) in a subprocess that signals itself at one point: when a module is first
imported (an import finder of the driver), or when a function is first called (a
profile function of the driver), so the point is exact however fast or loaded the
machine is. The run directory already holds a smoke run (`--limit 1`), so that the
record has a directory from the first moment and the run still has calls to make.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from tests.conftest import REPO, small_tournament

DRIVER = r"""
import importlib.abc, signal, sys

kind, target, sig = sys.argv[1], sys.argv[2], getattr(signal, sys.argv[3])
fired = False


def fire():
    global fired
    fired = True
    signal.raise_signal(sig)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target_module=None):
        if kind == "import" and name == target and not fired:
            fire()
        return None


def profile(frame, event, arg):
    if kind == "call" and event == "call" and not fired:
        file, _, function = target.partition(":")
        code = frame.f_code
        if code.co_name == function and code.co_filename.endswith(file):
            sys.setprofile(None)
            fire()


sys.meta_path.insert(0, Finder())
sys.setprofile(profile)
sys.argv = ["arena", *sys.argv[4:]]
from arena.__main__ import program

program()
"""

# (kind, target, the exit code the run ends with: None for the signal's own).
POINTS: dict[str, tuple[str, str, int | None]] = {
    "importing click": ("import", "click", None),
    "importing the config": ("import", "arena.config", None),
    "parsing the command line": ("call", "arena/cli/__init__.py:get_command", None),
    "starting the record": ("call", "arena/ops/_runrecord.py:start", None),
    "loading the tournament": ("call", "arena/config/_load.py:load_tournament", None),
    "preflight": ("call", "arena/engine.py:preflight", None),
    "taking the lock": ("call", "arena/store/_lock.py:acquire", None),
    "a call in flight": ("call", "arena/providers/sim.py:generate", None),
    "the history snapshot": ("call", "arena/rundir/_runs.py:record_history", None),
    # The run's exit code is decided (0) and written with its record: it stays.
    "writing the record": ("call", "arena/cli/_record.py:complete", 0),
}
SIGNALS = {"SIGINT": 130, "SIGTERM": 143}
# Both signals go through one handler (arena.runtime) and differ only in the exit code
# they map to: the first point (before the CLI's modules load) and a call in flight (the
# event loop's listener) take both, the other points one each, in turn.
BOTH = ("importing click", "a call in flight")
CASES = [
    (point, sig)
    for i, point in enumerate(POINTS)
    for sig in (list(SIGNALS) if point in BOTH else [list(SIGNALS)[i % 2]])
]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament whose run directory holds a smoke run of its first question."""
    root = tmp_path_factory.mktemp("signals")
    path = small_tournament(root, models=2, questions=3)
    done = _run_here(["run", str(path), "--limit", "1", "--json"])
    assert done.exit_code == 0, done.output
    return root


def _run_here(args: list[str]) -> Result:
    """A command without a signal, in this process (the signalled runs are subprocesses)."""
    return CliRunner().invoke(main, args)


def _program(args: list[str], point: tuple[str, str] = ("none", ""), sig: str = "SIGINT") -> Any:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", DRIVER, point[0], point[1], sig, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _copy(root: Path, dest: Path) -> Path:
    shutil.copytree(root, dest)
    config = dest / "t.yaml"
    config.write_text(config.read_text().replace(str(root), str(dest)))
    return config


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    lines = []
    for line in stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    return lines


@pytest.mark.parametrize(("point", "sig"), CASES)
def test_a_signal_at_any_point_ends_with_one_json_line_and_a_true_record(
    smoke_run: Path, tmp_path: Path, point: str, sig: str
) -> None:
    kind, target, expected = POINTS[point]
    config = _copy(smoke_run, tmp_path / "t")
    done = _program(["run", str(config), "--json"], (kind, target), sig)
    code = SIGNALS[sig] if expected is None else expected
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, done.stderr
    lines = _json_lines(done.stdout)
    assert len(lines) == 1, done.stdout
    line = lines[0]
    assert line["exit_code"] == code and line["record"]["exit_code"] == code
    last = json.loads((tmp_path / "t" / "out" / "last_run.json").read_text())
    assert last["run_id"] == line["run_id"] and last["exit_code"] == code
    report = json.loads(Path(line["report"]).read_text())
    assert report["exit_code"] == code


@pytest.mark.parametrize("point", ["importing click", "preflight", "the history snapshot"])
def test_a_following_run_keeps_the_signalled_runs_exit_code(
    smoke_run: Path, tmp_path: Path, point: str
) -> None:
    kind, target, _ = POINTS[point]
    config = _copy(smoke_run, tmp_path / "t")
    first = _json_lines(_program(["run", str(config), "--json"], (kind, target), "SIGTERM").stdout)
    assert first[0]["exit_code"] == 143
    done = _run_here(["run", str(config), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(Path(first[0]["report"]).read_text())
    assert report["exit_code"] == 143  # not re-marked as killed (137)
    assert report["record"]["exit_code"] == 143


def test_without_a_signal_the_run_makes_its_calls(smoke_run: Path, tmp_path: Path) -> None:
    """The cases above start from a directory whose run still has calls to make."""
    config = _copy(smoke_run, tmp_path / "t")
    done = _run_here(["run", str(config), "--json"])
    assert done.exit_code == 0, done.output
    line = _json_lines(done.stdout)[0]
    assert line["exit_code"] == 0 and line["completed"] > 0
