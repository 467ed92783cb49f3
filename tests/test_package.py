"""The package's top-level API: `arena.open_log` reads every table arena writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import small_tournament


def test_open_log_reads_every_table_in_a_fresh_interpreter(tmp_path: Path) -> None:
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        extra={
            "discussion": {
                "discussants": ["m0", "m1"],
                "trigger": "inconsistent",
                "allow_contestants": True,
            }
        },
    )
    run = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(yaml_path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    code = (
        "import arena, sys\n"
        "log = arena.open_log(sys.argv[1])\n"
        "print(*(log.read(t).height for t in "
        "('answers', 'reviews', 'discussions', 'batcheval', 'history')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    answers, reviews, discussions, batcheval, history = map(int, out.stdout.split())
    assert (answers, reviews, batcheval, history) == (6, 36, 0, 3)
    assert discussions > 0
