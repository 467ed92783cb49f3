"""An answer that failed at its second turn keeps the first; retry-failed asks only the second."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.providers import register_provider
from arena.store import RunLog
from tests.engine._turn_provider import STATE


def test_retry_resumes_after_the_turns_a_failed_answer_kept(tmp_path: Path) -> None:
    register_provider("turn2fails", "tests.engine._turn_provider:TurnTwoFails")
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "q0", "turns": ["One?", "Two?"]}) + "\n")
    cfg = {
        "name": "partial",
        "questions": "q.jsonl",
        "output": str(tmp_path / "out"),
        "providers": {"p": {"type": "turn2fails"}},
        "models": {"a": {"provider": "p"}, "b": {"provider": "p"}},
        "contestants": ["a", "b"],
        "retry": {"max_attempts": 1},
    }
    yaml_path = tmp_path / "t.yaml"
    yaml_path.write_text(yaml.safe_dump(cfg))
    STATE.update(fail_second_turn=True, messages=[])
    first = CliRunner().invoke(main, ["run", str(yaml_path)])
    assert first.exit_code == 3, first.output
    answers = RunLog(tmp_path / "out").read("answers")
    assert set(answers["status"]) == {"failed"}
    assert answers["answer_turns"].to_list() == [["a answer, turn 1"], ["b answer, turn 1"]]

    STATE.update(fail_second_turn=False, messages=[])
    retried = CliRunner().invoke(main, ["retry-failed", str(tmp_path / "out")])
    assert retried.exit_code == 0, retried.output
    # Two second turns (3 messages each) and the four reviews (one message each,
    # 2 ordered pairs x 2 reviewers): no first turn was asked again.
    assert sorted(STATE["messages"]) == [1, 1, 1, 1, 3, 3]
    answers = RunLog(tmp_path / "out").read("answers").sort("model")
    assert answers["answer_turns"].to_list() == [
        ["a answer, turn 1", "a answer, turn 2"],
        ["b answer, turn 1", "b answer, turn 2"],
    ]
    # Every row of each answer is kept, each counting only its own attempts:
    # turn one (partial), turn two refused (failed), turn two again (ok).
    every = RunLog(tmp_path / "out").read_all("answers").filter(pl.col("model") == "a")
    assert every["status"].to_list() == ["partial", "failed", "ok"]
    assert every["attempts"].to_list() == [1, 1, 1]
