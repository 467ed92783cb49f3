"""The `arena` program asks pyarrow's allocator, and for `run` and `retry-failed` polars'
too, to give freed memory back at once (arena.cli._allocators), unless the user's
environment says otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

# Loads a command as the program does (the command given as argv[1]), then the
# libraries, and reports what they were configured with.
PROBE = (
    "import json, os, sys\n"
    "import click\n"
    "from arena.cli import main\n"
    "assert main.get_command(click.Context(main), sys.argv[1]) is not None\n"
    "import polars, pyarrow\n"
    "print(json.dumps({'jemalloc': os.environ.get('_RJEM_MALLOC_CONF'),\n"
    "                  'pool': pyarrow.default_memory_pool().backend_name}))\n"
)


def _last_line(probe: str, command: str, unset: tuple[str, ...], env: dict[str, str]) -> str:
    """The last line a probe prints in a fresh interpreter, the variables `unset` removed
    from this environment and `env` added."""
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    done = subprocess.run(
        [sys.executable, "-c", probe, command],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[-1]


def _probe(command: str, **env: str) -> dict[str, str]:
    unset = ("_RJEM_MALLOC_CONF", "ARROW_DEFAULT_MEMORY_POOL")
    result: dict[str, str] = json.loads(_last_line(PROBE, command, unset, env))
    return result


@pytest.mark.parametrize("command", ["run", "retry-failed"])
def test_a_run_gives_freed_memory_back(command: str) -> None:
    found = _probe(command)
    # polars puts its own settings first; the later ones win in jemalloc.
    assert found["jemalloc"].endswith(",dirty_decay_ms:0,muzzy_decay_ms:0")
    assert found["pool"] == "system"


def test_other_commands_keep_polars_own_setting() -> None:
    found = _probe("leaderboard")
    assert "dirty_decay_ms:0" not in (found["jemalloc"] or "")
    assert found["pool"] == "system"


def test_the_users_allocator_settings_win() -> None:
    found = _probe("run", _RJEM_MALLOC_CONF="narenas:2", ARROW_DEFAULT_MEMORY_POOL="mimalloc")
    assert found["jemalloc"].endswith(",narenas:2")
    assert "dirty_decay_ms:0" not in found["jemalloc"]
    assert found["pool"] == "mimalloc"


# After the command is loaded: frees an 8 MiB block, then allocates 4 MiB and reports
# how much glibc holds in blocks mapped on their own (the 4 MiB are among them only
# when the threshold stayed at 128 KiB; glibc's own rule would have raised it to 8 MiB).
MAPPED_PROBE = (
    "import ctypes, sys\n"
    "import click\n"
    "from arena.cli import main\n"
    "assert main.get_command(click.Context(main), sys.argv[1]) is not None\n"
    "import numpy as np\n"
    "class Info(ctypes.Structure):\n"
    "    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', 'hblks',\n"
    "                'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
    "info = ctypes.CDLL(None).mallinfo2\n"
    "info.restype = Info\n"
    "big = np.ones(1 << 20); del big\n"
    "before = info().hblkhd\n"
    "half = np.ones(1 << 19)\n"
    "print(info().hblkhd - before)\n"
)


def _mapped_bytes(command: str, **env: str) -> int:
    return int(_last_line(MAPPED_PROBE, command, ("MALLOC_MMAP_THRESHOLD_",), env))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_run_maps_big_arrays_on_their_own_so_that_freeing_hands_them_back() -> None:
    assert _mapped_bytes("run") >= 4 << 20
    assert _mapped_bytes("retry-failed") >= 4 << 20
    assert _mapped_bytes("leaderboard") < 4 << 20  # glibc's own rule: from the heap
    # The user's setting (read by glibc at start) is left alone.
    assert _mapped_bytes("run", MALLOC_MMAP_THRESHOLD_="67108864") < 4 << 20


# Fills glibc's heap with 40,000 blocks of 1 KiB, frees all but every tenth (the heap's
# top stays in use, so nothing is handed back by itself), and prints the resident
# memory (KiB) before and after `arena.memory.trim_heap`.
TRIM_PROBE = (
    "import ctypes\n"
    "from arena.memory import trim_heap\n"
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
    before, after, released = _last_line(TRIM_PROBE, "-", (), {}).split()
    assert released == "True"
    # About 36 MiB are free between the blocks kept, a page of them at most 4 blocks
    # in use apart: most of those pages go back.
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
