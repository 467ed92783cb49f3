"""What arena changes in its own process (arena/runtime.py): the collector paused while an
everyday command loads, allocators that hand memory back during a run, the heap trimmed
between a run's phases; and no environment variable set in the user's name."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.runtime import RUN_COMMANDS, pause_collector

# Runs `arena ARGS...` as the program does (main() without arguments) and prints, as its
# last line on stderr, whether the collector was on when the command started its work
# and once the pause is over (argv[1] "1": waiting for it), and the environment
# variables the process added or changed. The pause is long enough for a busy machine.
PROBE = (
    "import gc, json, os, sys, threading\n"
    "wait = sys.argv[1] == '1'\n"
    "import arena.runtime\n"
    "arena.runtime.PAUSE_SECONDS = 60.0 if not wait else 0.5\n"
    "before = dict(os.environ)\n"
    "seen = {}\n"
    "import click\n"
    "orig_invoke = click.Command.invoke\n"
    "def invoke(self, ctx):\n"
    "    if self.name != 'main':\n"
    "        seen.setdefault('working', gc.isenabled())\n"
    "    return orig_invoke(self, ctx)\n"
    "click.Command.invoke = invoke\n"
    "def report():\n"
    "    for t in threading.enumerate():\n"
    "        if wait and t.name == 'arena-collector':\n"
    "            t.join()\n"
    "    seen['later'] = gc.isenabled()\n"
    "    seen['env'] = {k: v for k, v in os.environ.items() if before.get(k) != v}\n"
    "    sys.stderr.write(json.dumps(seen) + '\\n')\n"
    "import arena.cli._exit as ex\n"
    "real_exit = ex.exit_program\n"
    "def exit_program(code):\n"
    "    report()\n"
    "    real_exit(code)\n"
    "import arena.cli as cli\n"
    "cli._exit_program = exit_program\n"
    "sys.argv = ['arena', *sys.argv[2:]]\n"
    "cli.main()\n"
)


def _probe(wait: bool, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(int(wait)), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    seen: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    return seen


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from tests.conftest import finished_small_run

    config, out = finished_small_run(tmp_path_factory.mktemp("runtime"), models=3, questions=2)
    return config, out


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def _set_by_arena(changed: dict[str, str]) -> dict[str, str]:
    """The variables arena changed: polars writes its own jemalloc settings when
    imported (dirty and muzzy decay 500 and 1000 ms), and only those may differ."""
    polars_own = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:500,muzzy_decay_ms:1000"}
    return {k: v for k, v in changed.items() if polars_own.get(k) != v}


@pytest.mark.parametrize("wait", [False, True])
def test_an_everyday_command_works_with_the_collector_off_for_a_while(
    small_run: tuple[Path, Path], wait: bool
) -> None:
    seen = _probe(wait, "status", str(small_run[1]), "--json")
    if not wait:  # a 60 s pause: off while the command works
        assert (seen["working"], seen["later"]) == (False, False)
    else:  # a 0.5 s pause, waited for: on again
        assert seen["later"] is True
    assert _set_by_arena(seen["env"]) == {}  # nothing set in the user's name


def test_a_run_keeps_the_collector_and_sets_no_variable(small_run: tuple[Path, Path]) -> None:
    seen = _probe(False, "run", str(small_run[0]), "--json")
    assert (seen["working"], seen["later"]) == (True, True)
    assert _set_by_arena(seen["env"]) == {}


def test_pause_collector_leaves_runs_and_a_collector_already_off(collector_on: None) -> None:
    timer = pause_collector("status", seconds=0.1)
    assert timer is not None and timer.daemon and not gc.isenabled()
    timer.join()
    assert gc.isenabled()
    assert all(pause_collector(command) is None for command in RUN_COMMANDS)
    gc.disable()
    assert pause_collector("status") is None and not gc.isenabled()


def test_a_command_called_as_a_function_keeps_the_callers_collector(
    small_run: tuple[Path, Path], collector_on: None
) -> None:
    from arena.cli import main

    result = CliRunner().invoke(main, ["status", str(small_run[1]), "--json"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()


# Frees an 8 MiB block, then allocates 4 MiB and prints pyarrow's pool and how much glibc
# holds in blocks mapped on their own (the 4 MiB are among them only when the threshold
# stayed at 128 KiB; glibc's own rule would have raised it to 8 MiB).
MAPPED_PROBE = (
    "import ctypes, sys\n"
    "import numpy as np, pyarrow\n"
    "if sys.argv[1] == 'run':\n"
    "    from arena.runtime import release_memory_promptly\n"
    "    release_memory_promptly()\n"
    "class Info(ctypes.Structure):\n"
    "    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', 'hblks',\n"
    "                'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
    "info = ctypes.CDLL(None).mallinfo2\n"
    "info.restype = Info\n"
    "big = np.ones(1 << 20); del big\n"
    "before = info().hblkhd\n"
    "half = np.ones(1 << 19)\n"
    "print(pyarrow.default_memory_pool().backend_name, info().hblkhd - before)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_run_hands_big_arrays_and_arrows_memory_back() -> None:
    def probe(mode: str) -> tuple[str, int]:
        env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
        out = subprocess.run(
            [sys.executable, "-c", MAPPED_PROBE, mode],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return out[-2], int(out[-1])

    pool, mapped = probe("run")
    assert pool == "system" and mapped >= 4 << 20
    pool, mapped = probe("-")
    assert pool != "system" and mapped < 4 << 20  # glibc's own rule: from the heap


# Fills glibc's heap with 40,000 blocks of 1 KiB, frees all but every tenth (the heap's
# top stays in use, so nothing is handed back by itself), and prints the resident
# memory (KiB) before and after `trim_heap`.
TRIM_PROBE = (
    "import ctypes\n"
    "from arena.runtime import trim_heap\n"
    "malloc, free = ctypes.CDLL(None).malloc, ctypes.CDLL(None).free\n"
    "malloc.restype = ctypes.c_void_p\n"
    "free.argtypes = (ctypes.c_void_p,)\n"
    "blocks = [malloc(1024) for _ in range(40_000)]\n"
    "for k, block in enumerate(blocks):\n"
    "    if k % 10:\n"
    "        free(block)\n"
    "def resident():\n"
    "    with open('/proc/self/statm') as f:\n"
    "        return int(f.read().split()[1]) * 4\n"
    "before = resident()\n"
    "released = trim_heap()\n"
    "print(before, resident(), released)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_trim_heap_hands_back_the_free_pages_between_blocks_in_use() -> None:
    out = subprocess.run(
        [sys.executable, "-c", TRIM_PROBE], capture_output=True, text=True, check=True
    ).stdout
    before, after, released = out.split()
    assert released == "True"
    # About 36 MiB are free between the blocks kept: most of those pages go back.
    assert int(before) - int(after) >= 16 * 1024


def test_a_run_trims_the_heap_after_its_calls_and_after_its_snapshot(
    make_tournament: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the calls freed goes back before the history snapshot reads the log, and
    what the snapshot freed before the night report reads it again."""
    import arena.engine as engine
    from arena.cli import main

    events: list[str] = []
    real_board = engine.build_leaderboard

    def board(*args: Any, **kwargs: Any) -> Any:
        events.append("snapshot")
        return real_board(*args, **kwargs)

    monkeypatch.setattr(engine, "trim_heap", lambda: events.append("trim") or True)
    monkeypatch.setattr(engine, "build_leaderboard", board)
    config = make_tournament(models=3, questions=3)
    result = CliRunner().invoke(main, ["run", str(config), "--json"])
    assert result.exit_code == 0, result.output
    assert events == ["trim", "snapshot", "trim"]
    events.clear()
    result = CliRunner().invoke(main, ["run", str(config), "--json"])  # nothing new to run
    assert result.exit_code == 0, result.output
    assert events and set(events) == {"trim"}  # the history has this board: no snapshot
