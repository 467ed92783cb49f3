"""The `arena` program asks polars' and pyarrow's allocators to give freed memory back
at once (arena.cli._allocators), unless the user's environment says otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Imports the CLI first (as the program does), then the libraries, and reports what
# they were configured with.
PROBE = (
    "import json, os\n"
    "import arena.cli\n"
    "import polars, pyarrow\n"
    "print(json.dumps({'jemalloc': os.environ.get('_RJEM_MALLOC_CONF'),\n"
    "                  'pool': pyarrow.default_memory_pool().backend_name}))\n"
)


def _probe(**env: str) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("_RJEM_MALLOC_CONF", "ARROW_DEFAULT_MEMORY_POOL")
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_program_gives_freed_memory_back() -> None:
    found = _probe()
    # polars puts its own settings first; the later ones win in jemalloc.
    assert found["jemalloc"].endswith(",dirty_decay_ms:0,muzzy_decay_ms:0")
    assert found["pool"] == "system"


def test_the_users_allocator_settings_win() -> None:
    found = _probe(_RJEM_MALLOC_CONF="narenas:2", ARROW_DEFAULT_MEMORY_POOL="mimalloc")
    assert found["jemalloc"].endswith(",narenas:2")
    assert "dirty_decay_ms:0" not in found["jemalloc"]
    assert found["pool"] == "mimalloc"
