"""The `arena` program asks pyarrow's allocator, and for `run` and `retry-failed` polars'
too, to give freed memory back at once (arena.cli._allocators), unless the user's
environment says otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
