"""Commands that loop over the log's tables see every stage's table, imported or not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.viewer._support import make_run

STAGE_TABLES = {"discussions", "batcheval"}


def _fresh(code: str) -> str:
    """Run `code` in a new interpreter (no stage package imported yet); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _arena(*args: str) -> str:
    return _fresh(
        "import sys\nfrom arena.cli import main\n"
        f"try:\n    main({list(args)!r})\nexcept SystemExit as exc:\n    assert not exc.code\n"
    )


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("tables"), runs=1)


def test_register_all_tables_registers_every_stage_table() -> None:
    out = _fresh(
        "import sys\n"
        "from arena.store import TABLES\n"
        "from arena.stages import register_all_tables\n"
        "register_all_tables()\n"
        "print(sorted(TABLES))\n"
    )
    assert {"answers", "reviews", "discussions", "batcheval", "sampling"} <= set(
        json.loads(out.strip().replace("'", '"'))
    )


def test_export_includes_stage_tables_in_a_fresh_process(run_dir: Path, tmp_path: Path) -> None:
    summary = json.loads(_arena("export", str(run_dir), "--to", str(tmp_path / "x"), "--json"))
    assert STAGE_TABLES <= set(summary["tables"])
    assert all(summary["tables"][t] > 0 for t in STAGE_TABLES)
    assert all((tmp_path / "x" / f"{t}.parquet").is_file() for t in STAGE_TABLES)


def test_gc_includes_stage_tables_in_a_fresh_process(run_dir: Path) -> None:
    data = json.loads(_arena("gc", str(run_dir), "--json"))
    assert STAGE_TABLES <= {t["table"] for t in data["tables"]}
