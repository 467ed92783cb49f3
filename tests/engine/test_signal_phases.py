"""Ctrl-C at any moment of `arena run` exits 130 (documented), never 1 "Aborted!", a
traceback, or a death by the signal after the run completed (issue 23).

Each case runs the real program in a subprocess and delivers a real SIGINT to it
at one phase: a small driver wraps the function that runs at that phase so that
the process signals itself there (`signal.raise_signal`), which makes the phase
exact however fast or loaded the machine is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, small_tournament

DRIVER = r"""
import atexit, signal, sys

import arena.cli as cli

phase = sys.argv[1]


def interrupt_first(owner, name):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return original(*args, **kwargs)

    setattr(owner, name, wrapped)


if phase == "loading":  # click parses the command line, before any command code
    interrupt_first(cli.LazyGroup, "make_context")
elif phase == "history":  # end-of-run work: the leaderboard snapshot of a complete run
    import arena.engine

    interrupt_first(arena.engine, "record_history")
elif phase == "cleanup":  # after the command ended: click closes its root context
    make_context = cli.LazyGroup.make_context

    def closing_interrupts(self, *args, **kwargs):
        ctx = make_context(self, *args, **kwargs)
        ctx.call_on_close(lambda: signal.raise_signal(signal.SIGINT))
        return ctx

    cli.LazyGroup.make_context = closing_interrupts
elif phase == "teardown":  # after the command ended: Python's own exit
    atexit.register(signal.raise_signal, signal.SIGINT)
sys.argv = ["arena", *sys.argv[2:]]
cli.main()
"""


def _run(phase: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", DRIVER, phase, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_sigint_once_the_run_ended_keeps_its_exit_code(tmp_path: Path) -> None:
    """A Ctrl-C while click closes its context comes after the run's record and `--json`
    line were written with exit 0: the process ends with that code (issue 46)."""
    path = small_tournament(tmp_path, models=2, questions=2)
    done = _run("cleanup", "run", str(path), "--json")
    assert "Traceback" not in done.stderr and "Aborted!" not in done.stderr
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == line["exit_code"] == line["record"]["exit_code"] == 0


@pytest.mark.parametrize("phase", ["loading", "history"])
def test_sigint_exits_130_without_a_traceback(tmp_path: Path, phase: str) -> None:
    path = small_tournament(tmp_path, models=2, questions=2)
    done = _run(phase, "run", str(path), "--json")
    assert done.returncode == 130, done.stderr
    assert "arena: interrupted" in done.stderr
    assert "Traceback" not in done.stderr and "Aborted!" not in done.stderr
    if phase == "history":  # the calls were all logged; the summary says how it ended
        assert json.loads(done.stdout.strip().splitlines()[-1])["exit_code"] == 130
        resumed = _run("none", "run", str(path), "--json")
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout.strip().splitlines()[-1])["completed"] == 0


def test_sigint_after_the_run_completed_does_not_kill_the_process(tmp_path: Path) -> None:
    """The process ends with the command, not after Python's teardown: a late Ctrl-C
    can neither print a traceback nor kill it by the signal (its exit code stays)."""
    path = small_tournament(tmp_path, models=2, questions=2)
    done = _run("teardown", "run", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["exit_code"] == 0
