"""Lone UTF-16 surrogates: replaced (and counted) in texts from providers, refused in files."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.providers.sim import SimProvider
from arena.store import RunLog
from arena.types import GenerateRequest, GenerateResult
from tests.conftest import small_tournament
from tests.store.test_store_log import answer


def test_the_writer_replaces_a_lone_surrogate_instead_of_crashing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def write() -> int:
        async with RunLog(tmp_path).writer() as writer:
            await writer.write("answers", answer(0, answer_turns=["bad \ud800 text", "ok"]))
            await writer.write("answers", answer(1, error="echo \udfff\ud800"))
            return writer.replaced_chars

    with caplog.at_level(logging.WARNING, logger="arena.store"):
        assert asyncio.run(write()) == 3
    rows = RunLog(tmp_path).read("answers").sort("id")
    assert rows["answer_turns"][0].to_list() == ["bad \ufffd text", "ok"]
    assert rows["error"][1] == "echo \ufffd\ufffd"
    assert any("lone surrogate" in r.getMessage() for r in caplog.records)


def test_a_provider_answer_with_a_lone_surrogate_is_logged_valid_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=2)
    real = SimProvider.generate

    async def surrogate(self: SimProvider, request: GenerateRequest) -> GenerateResult:
        result = await real(self, request)
        if "Question number 0" in request.messages[-1].content:  # answers and reviews of q0
            return GenerateResult(result.text + " \ud800", result.usage, result.rate_headers)
        return result

    monkeypatch.setattr(SimProvider, "generate", surrogate)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    log = RunLog(tmp_path / "out")
    answers = log.read("answers").filter(pl.col("question_id") == "q0")
    reviews = log.read("reviews").filter(pl.col("question_id") == "q0")
    assert (answers.height, reviews.height) == (2, 4)
    assert report["replaced_chars"] == 2 + 4  # one in each of them
    assert all(turns[-1].endswith(" \ufffd") for turns in answers["answer_turns"].to_list())
    assert all(text.endswith(" \ufffd") for text in reviews["text"].to_list())
    # A rerun reads the log and pays nothing again.
    again = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert json.loads(again.stdout.strip().splitlines()[-1])["completed"] == 0


def test_a_question_file_with_a_lone_surrogate_is_bad_input(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=2)
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "q0", "text": "fine \\ud83d\\ude00"}\n{"id": "q1", "text": "bad \\ud800 here"}\n'
    )
    result = CliRunner().invoke(main, ["run", str(yaml_path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{questions}: line 2: text: lone surrogate \\ud800" in result.output
    assert not (tmp_path / "out" / "log").exists() or not RunLog(tmp_path / "out").ids("answers")
