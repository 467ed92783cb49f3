"""Shared fixtures: small sim tournaments written to a temporary directory."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

# The suite runs on as many worker processes as the machine has cores (`make test`):
# OpenBLAS's own threads would only compete with the other worker for the cores, and
# their spinning makes the small solves of the ranking tests many times dearer. Set
# before NumPy loads (this file is read before any test module); the runs the tests
# start as subprocesses inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent


def small_tournament(
    tmp: Path,
    *,
    models: int = 3,
    questions: int = 4,
    multi_turn: bool = False,
    sim: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a tiny sim tournament (YAML + questions) and return the YAML path."""
    qlines = []
    for i in range(questions):
        if multi_turn and i == 0:
            qlines.append(
                {"question_id": i, "category": "x", "turns": [f"Q{i} part one?", "And part two?"]}
            )
        else:
            qlines.append({"id": f"q{i}", "text": f"Question number {i}?"})
    (tmp / "q.jsonl").write_text("\n".join(json.dumps(q) for q in qlines) + "\n")
    names = [f"m{i}" for i in range(models)]
    cfg: dict[str, Any] = {
        "name": "small",
        "seed": 3,
        "questions": "q.jsonl",
        "output": str(tmp / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 16}}},
        "models": {
            n: {"provider": "sim", "sim": {"skill": float(models - i), **(sim or {})}}
            for i, n in enumerate(names)
        },
        "contestants": names,
        "retry": {"max_attempts": 3, "backoff_base": 0.001, "backoff_max": 0.01},
    }
    cfg.update(extra or {})
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def finished_small_run(tmp: Path, *, models: int, questions: int) -> tuple[Path, Path]:
    """A small sim tournament in `tmp`, run to the end by `arena run`:
    (tournament YAML, run directory)."""
    from click.testing import CliRunner

    from arena.cli import main

    config = small_tournament(tmp, models=models, questions=questions)
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    return config, tmp / "out"


@pytest.fixture
def make_tournament(tmp_path: Path) -> Callable[..., Path]:
    """Factory fixture for small_tournament in the test's tmp_path."""

    def make(**kwargs: Any) -> Path:
        return small_tournament(tmp_path, **kwargs)

    return make
