"""Bad discussion input exits 2 before any call, naming the file and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import ConfigError, load_tournament
from tests.conftest import small_tournament


@pytest.mark.parametrize(
    ("section", "key", "problem"),
    [
        ({"discussants": "top3"}, "discussion.discussants", "unknown discussant 'top3'"),
        (
            {"discussants": ["m0", "nobody"]},
            "discussion.discussants[1]",
            "'nobody' is not a configured model",
        ),
        (
            {"discussants": {"all-pairs": ["m0", "m1", "ghost"]}},
            "discussion.discussants.all-pairs[2]",
            "'ghost' is not a configured model",
        ),
        ({"discussants": ["m0", "m0"]}, "discussion.discussants", "two different models"),
        ({"discussants": ["m0", "m1", "m2"]}, "discussion.discussants", "two different models"),
        ({"max_turns": 0}, "discussion.max_turns", "greater than or equal to 1"),
        ({"leader": "m2", "discussants": ["m0", "m1"]}, "discussion.leader", "'m2' is not"),
        ({"trigger": ["tie", "often"]}, "discussion.trigger[1]", "Input should be"),
        ({"outcome": "merge"}, "discussion.outcome", "Input should be"),
        ({"weight": 0}, "discussion.weight", "greater than or equal to 1"),
        ({"turns": 3}, "discussion.turns", "unknown key"),
        ({"temperatures": {"ghost": 0.8}}, "discussion.temperatures.ghost", "not a configured"),
        ({"temperatures": {"m0": -1}}, "discussion.temperatures.m0", "greater than or equal"),
        # 3 models, each a reviewer: a battle has one reviewer besides its contestants
        ({}, "discussion.discussants", "top2 excludes a battle's contestants"),
        ({"discussants": ["m0", "m1"]}, "discussion.discussants", "never discuss it"),
        (
            {"discussants": {"all-pairs": ["m0", "m1", "m2"]}},
            "discussion.discussants",
            "allow_contestants: true",
        ),
    ],
)
def test_bad_section_exits_2_before_any_call(
    tmp_path: Path, section: dict[str, Any], key: str, problem: str
) -> None:
    path = small_tournament(tmp_path, extra={"discussion": section})
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.key == key and problem in info.value.problem
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert f"{path}: {key}:" in result.output
    assert not (tmp_path / "out").exists()


def test_top2_needs_two_reviewers(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, extra={"reviewers": ["m0"], "discussion": {}})
    with pytest.raises(ConfigError, match="top2 needs at least two reviewers"):
        load_tournament(path)


def test_contestants_may_discuss_when_allowed_and_four_reviewers_suffice(tmp_path: Path) -> None:
    allowed = {"discussion": {"allow_contestants": True}}
    assert load_tournament(small_tournament(tmp_path, extra=allowed)).config.discussion
    # four contestants reviewing: every battle keeps two other reviewers
    four = load_tournament(small_tournament(tmp_path, models=4, extra={"discussion": {}}))
    assert four.config.discussion is not None
    assert not four.config.discussion.allow_contestants
    assert not four.config.discussion.stop_on_agreement


def test_a_missing_or_incomplete_template_exits_2(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=4, extra={"discussion": {"template": "nope.txt"}})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2 and "discussion.template" in result.output
    assert "template file not found" in result.output
    assert not (tmp_path / "out").exists()
    # the single-message format's {history}: turns are chat messages now
    old = "{question} {answer_a} {answer_b} {reviews}\n{history}\n"
    (tmp_path / "old.txt").write_text(old)
    path = small_tournament(tmp_path, models=4, extra={"discussion": {"template": "old.txt"}})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2 and "discussion.template" in result.output
    assert "{history}" in result.output and "chat messages" in result.output
    (tmp_path / "role.txt").write_text("You are {reviewer}.")
    path = small_tournament(tmp_path, models=4, extra={"discussion": {"role_template": "role.txt"}})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2 and "discussion.role_template" in result.output
    assert "{other}" in result.output


def test_arena_discuss_refuses_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["discuss", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "pass --config" in result.output
    result = runner.invoke(main, ["discuss", str(tmp_path), "--trigger", "sometimes"])
    assert result.exit_code == 2 and "sometimes" in result.output
    path = small_tournament(tmp_path, extra={"reviewers": ["m0"]})
    result = runner.invoke(main, ["discuss", str(tmp_path / "out"), "--config", str(path)])
    assert result.exit_code == 2 and "discussion.discussants" in result.output
    assert not (tmp_path / "out" / "log").exists()
