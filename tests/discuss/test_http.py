"""Discussions over HTTP: the chat format through the OpenAI, Anthropic and Gemini wire formats.

The fake server decodes each request back into messages and answers as a sim
discussant, which reads its role from the system prompt and its own turns
from the assistant messages: a discussion only runs its turns with readable
preferences when every wire format carries the chat intact.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from arena.config import load_tournament
from arena.discuss import TABLE
from arena.engine import run_tournament
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.store import RunLog
from tests.providers_http.conftest import KEYS, set_keys, write_tournament

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


@pytest.fixture(scope="module")
def noisy() -> Iterator[FakeServer]:
    """A fake server whose models judge noisily, with a position bias: battles get disputed."""
    judge = {"judge_noise": 1.5, "position_bias": 1.0, "answer_words": 10}
    config = {
        "seed": 9,
        "keys": list(KEYS.values()),
        "models": {
            "alpha": {"skill": 1.0, **judge},
            "beta": {"skill": 0.5, **judge},
            "gamma": {"skill": 0.0, **judge},
        },
    }
    with FakeServer(FakeServerConfig.model_validate(config)) as s:
        yield s


def test_discussion_turns_over_every_wire_format(
    tmp_path: Path, noisy: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = noisy
    set_keys(monkeypatch)
    models = {"alpha": "p_openai", "beta": "p_anthropic", "gamma": "p_gemini"}
    path = write_tournament(tmp_path, server, models=models, questions=1)
    text = path.read_text()
    # two judges besides the contestants, so every battle has two eligible discussants
    text = text.replace(
        "contestants:",
        "  judge_a:\n    provider: p_anthropic\n    model: alpha\n    max_tokens: 200\n"
        "  judge_g:\n    provider: p_gemini\n    model: beta\n    max_tokens: 200\n"
        "contestants:",
        1,
    )
    text += (
        "reviewers: [alpha, beta, gamma, judge_a, judge_g]\n"
        "discussion:\n  trigger: [tie, inconsistent]\n"
    )
    path.write_text(text)
    t = load_tournament(path)
    summary = asyncio.run(run_tournament(t))
    assert summary.failed == 0 and summary.pending == 0
    table = RunLog(t.output_dir).read(TABLE)
    finals = table.filter(pl.col("kind") == "final")
    assert finals.height > 0
    turns = table.filter(pl.col("kind") == "turn")
    assert (turns["status"] == "ok").all()
    assert (finals["turn"] == 4).all()  # all four turns, every one readable
    speakers = set(turns["speaker"].to_list())
    providers = set(turns["provider"].to_list())
    assert len(providers) >= 2 and speakers <= {"alpha", "beta", "gamma", "judge_a", "judge_g"}
    for row in finals.iter_rows(named=True):
        assert not {row["leader"], row["follower"]} & {row["model_a"], row["model_b"]}
    # the sim discussants signed their turns: the replies came from the chat, not a review
    assert turns["text"].str.contains("⟦sim reviewer=").all()
