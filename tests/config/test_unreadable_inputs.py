"""Unreadable or misplaced inputs exit 2 with file, key and problem, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arena.config import ConfigError, load_tournament
from tests.conftest import small_tournament
from tests.rundir._support import cli


def test_questions_file_not_utf8(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    (tmp_path / "q.jsonl").write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match="q.jsonl.*not UTF-8"):
        load_tournament(path)


def test_yaml_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(b"name: x\n\xff\n")
    with pytest.raises(ConfigError, match="t.yaml.*not UTF-8"):
        load_tournament(path)


def test_output_dir_is_a_file(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="--out: not a directory"):
        load_tournament(path, blocker)
    cfg = yaml.safe_load(path.read_text())
    cfg["output"] = str(blocker / "sub")
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="output: not a directory"):
        load_tournament(path)


def test_run_into_a_file_exits_2(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    result = cli("run", str(path), "--out", str(blocker), "--json")
    assert result.exit_code == 2
    assert "not a directory" in result.stderr
    result = cli("retry-failed", str(blocker))
    assert result.exit_code == 2
    assert "not a run directory" in result.stderr
