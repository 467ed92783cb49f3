"""A model's system prompt, reasoning effort and extra params reach each API; a local
OpenAI-compatible server that sends no usage and no rate-limit headers still works."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.store import RunLog
from arena.types import GenerateRequest, Message
from tests.providers_http.conftest import make_provider, write_tournament

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

# What each API's body must carry for the model's settings (fields counted by /fake/stats).
EXPECTED = {
    "openai": {
        "reasoning_effort": "low",
        "extra": {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}},
        "fields": [
            "openai.body.reasoning_effort",
            "openai.body.top_k",
            "openai.body.chat_template_kwargs.enable_thinking",
        ],
    },
    "anthropic": {
        "reasoning_effort": "high",
        "extra": {"metadata": {"user_id": "arena"}},
        "fields": [
            "anthropic.body.system",
            "anthropic.body.output_config.effort",
            "anthropic.body.metadata.user_id",
        ],
    },
    "gemini": {
        "reasoning_effort": "low",
        "extra": {"generationConfig": {"topK": 20}},
        "fields": [
            "gemini.body.systemInstruction",
            "gemini.body.generationConfig.thinkingConfig",
            "gemini.body.generationConfig.topK",
        ],
    },
}


@pytest.mark.parametrize("ptype", list(EXPECTED))
def test_system_effort_and_extra_reach_the_api(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    want: dict[str, Any] = EXPECTED[ptype]
    provider = make_provider(server, ptype, monkeypatch)
    request = GenerateRequest(
        model="alpha",
        messages=(Message("user", "Say something."),),
        max_tokens=200,
        system="You are terse.",
        reasoning_effort=want["reasoning_effort"],
        extra=want["extra"],
    )
    before = server.stats()["counts"]

    async def once() -> str:
        try:
            return (await provider.generate(request)).text
        finally:
            await provider.close()

    assert asyncio.run(once()).strip()
    after = server.stats()["counts"]
    for field in want["fields"]:
        assert after.get(field, 0) == before.get(field, 0) + 1, field


def test_local_server_without_usage_or_rate_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = FakeServerConfig(omit_usage=True, rate_headers=False)
    with FakeServer(config) as local:
        monkeypatch.setenv("LOCAL_KEY", "none")
        providers = {
            "local": {
                "type": "openai",
                "base_url": local.url + "/v1",
                "api_key_env": "LOCAL_KEY",
                "timeout": 5,
            }
        }
        path = write_tournament(
            tmp_path,
            local,
            models={"llama3.1": "local", "qwen2.5": "local"},
            providers=providers,
            extra={
                "models": {
                    "llama3.1": {"provider": "local", "max_tokens": 200, "extra": {"top_k": 40}},
                    "qwen2.5": {"provider": "local", "max_tokens": 200},
                }
            },
        )
        result = CliRunner().invoke(main, ["run", str(path), "--json"])
        assert result.exit_code == 0, result.output
        summary = json.loads(result.stdout.strip().splitlines()[-1])
        assert summary["failed"] == 0 and summary["completed"] == summary["planned"]
        # llama3.1's three answers and its reviews (3 questions x 2 ordered pairs) carry it.
        assert local.stats()["counts"]["openai.body.top_k"] == 3 + 6
    log = RunLog(tmp_path / "out")
    answers = log.read("answers")
    assert answers.height == 6 and set(answers["status"]) == {"ok"}
    assert (answers["cost_usd"] == 0).all()  # a local model has no price
    board = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "out"), "--format", "json"])
    assert board.exit_code == 0, board.output
    assert {row["model"] for row in json.loads(board.stdout)["models"]} == {"llama3.1", "qwen2.5"}
