"""`RunLog.sum_all` finds rows written twice from one 8-byte hash a row: those hashes
stand once in memory while they are sorted, not twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.store._log import _repeats


def _parts(seed: int, parts: int = 8, rows: int = 1 << 17) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2**63, rows, dtype=np.uint64) for _ in range(parts)]


def test_a_hash_twice_is_found_across_parts_and_the_parts_are_emptied() -> None:
    hashes = _parts(1)
    assert not _repeats(list(hashes))
    hashes[5][7] = hashes[2][100]
    given = list(hashes)
    assert _repeats(given)
    assert given == []  # the caller's list is emptied: the parts' memory can go
    assert not _repeats([])


# In a fresh interpreter with the run's malloc threshold: 8 parts of 4 MiB of hashes,
# then the growth of the peak resident memory (KiB) while `_repeats` sorts them.
PROBE = """
import numpy as np
from arena.store._log import _repeats
rng = np.random.default_rng(3)
hashes = [rng.integers(0, 2**63, 1 << 19, dtype=np.uint64) for _ in range(8)]
def status(key):
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith(key)).split()[1])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident memory starts again from now
before = status("VmRSS:")
assert not _repeats(hashes)
print(status("VmHWM:") - before)
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's peak reset")
def test_the_hashes_stand_once_in_memory_while_sorted() -> None:
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}  # as `arena run` sets it
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    growth_kib = int(done.stdout.split()[-1])
    # 32 MiB of hashes: a concatenated copy would add 32 MiB; moved part by part into
    # one array (each part freed once moved), the peak grows by about one part.
    assert growth_kib <= 12 * 1024
