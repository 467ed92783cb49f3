"""`arena.open_log` registers every table arena writes (README): each one reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, finished_small_run

# In a fresh interpreter: in this one, other tests may have imported the packages
# that register tables.
READ_EVERY_TABLE = r"""
import json, sys
import arena
from arena.store import TABLES

log = arena.open_log(sys.argv[1])
print(json.dumps({table: log.read(table).height for table in sorted(TABLES)}))
"""


def test_open_log_reads_every_table_arena_writes(tmp_path: Path) -> None:
    _, out = finished_small_run(tmp_path, models=2, questions=2)
    done = subprocess.run(
        [sys.executable, "-c", READ_EVERY_TABLE, str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    heights = json.loads(done.stdout)
    expected = {"answers", "reviews", "history", "batch_jobs", "discussions"}
    expected |= {"batcheval", "sampling"}
    assert expected <= set(heights)
    assert heights["answers"] == 4 and heights["reviews"] == 8 and heights["batch_jobs"] == 0
