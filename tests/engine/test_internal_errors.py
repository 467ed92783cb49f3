"""A bug in a provider (an unexpected exception) fails its call at once and soon stops the run."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.providers.sim import SimProvider
from arena.scheduler._scheduler import MAX_INTERNAL_ERRORS
from arena.store import RunLog
from arena.types import GenerateRequest, GenerateResult
from tests.conftest import small_tournament


def test_unexpected_exceptions_are_not_retried_and_stop_the_run_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=3)
    calls = {"n": 0}

    async def buggy(self: SimProvider, request: GenerateRequest) -> GenerateResult:
        calls["n"] += 1
        raise AttributeError("'NoneType' object has no attribute 'text'")

    monkeypatch.setattr(SimProvider, "generate", buggy)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json", "--limit", "3"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["internal_errors"] >= MAX_INTERNAL_ERRORS
    assert "unexpected errors" in report["stopped_by_errors"]
    assert report["pending"] > 0
    # Each buggy call was made once (never retried) and is logged failed with its traceback.
    failed = RunLog(tmp_path / "out").read("answers").filter(pl.col("status") == "failed")
    assert failed.height == report["internal_errors"] == calls["n"]
    assert set(failed["attempts"].to_list()) == {1}
    for error in failed["error"].to_list():
        assert error.startswith("internal error: AttributeError")
        assert "Traceback (most recent call last)" in error and "in buggy" in error
    assert any(e["reason"] == "internal error" for e in report["errors"])
