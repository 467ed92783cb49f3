"""Tournament YAML validation: every bad case names the file, the key and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arena.config import ConfigError, load_tournament
from tests.conftest import small_tournament


def _edit(path: Path, change: dict) -> None:
    data = yaml.safe_load(path.read_text())
    for dotted, value in change.items():
        node = data
        keys = dotted.split(".")
        for k in keys[:-1]:
            node = node[k]
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    path.write_text(yaml.safe_dump(data))


_DELETE = object()


def test_valid_tournament_loads_with_defaults(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, multi_turn=True))
    assert t.contestants == ["m0", "m1", "m2"]
    assert t.reviewers == t.contestants
    assert len(t.questions) == 4
    assert t.questions[0].turns == ("Q0 part one?", "And part two?")
    assert t.questions[1].id == "q1"
    assert "{answer_a}" in t.review_template


@pytest.mark.parametrize(
    ("change", "key", "problem"),
    [
        ({"surprise": 1}, "surprise", "unknown key"),
        ({"models.m0.temperature": "hot"}, "models.m0.temperature", "valid number"),
        ({"models.m0.provider": "nowhere"}, "models.m0.provider", "undefined provider"),
        ({"contestants": ["m0", "zz"]}, "contestants[1]", "undefined model 'zz'"),
        ({"contestants": ["m0", "m0"]}, "contestants[1]", "duplicate name"),
        ({"contestants": []}, "contestants", "at least 2"),
        ({"reviewers": []}, "reviewers", "at least one reviewer"),
        ({"questions": "missing.jsonl"}, "questions", "not found"),
        ({"providers.sim.type": "carrier-pigeon"}, "providers.sim.type", "unknown provider type"),
        ({"providers.sim.limits.rpm": -5}, "providers.sim.limits.rpm", "greater than or equal"),
        ({"name": _DELETE}, "name", "required key is missing"),
    ],
)
def test_bad_config_names_key_and_problem(
    tmp_path: Path, change: dict, key: str, problem: str
) -> None:
    path = small_tournament(tmp_path)
    _edit(path, change)
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.file == str(path)
    assert info.value.key == key
    assert problem in info.value.problem
    assert str(path) in str(info.value)


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("name: x\nmodels: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert "invalid YAML" in info.value.problem
    assert "line" in info.value.key


def test_duplicate_yaml_key_is_rejected(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    text = path.read_text().replace("models:\n", "models:\n  m0:\n    provider: sim\n", 1)
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert "duplicate key 'm0'" in info.value.problem


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "no questions"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "duplicate question id"),
        ('{"text": "x"}\n', "missing 'question_id'"),
        ('{"id": {"x": 1}, "text": "x"}\n', "must be a string or an integer"),
        ('{"id": 1, "turns": []}\n', "non-empty list"),
        ("not json\n", "invalid JSON"),
    ],
)
def test_bad_questions_file(tmp_path: Path, content: str, problem: str) -> None:
    path = small_tournament(tmp_path)
    (tmp_path / "q.jsonl").write_text(content)
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert problem in str(info.value)
    assert "q.jsonl" in str(info.value)


def test_template_without_placeholder(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    (tmp_path / "tpl.txt").write_text("Judge {question} and {answer_a} only")
    _edit(path, {"review": {"template": "tpl.txt"}})
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.key == "review.template"
    assert "{answer_b}" in info.value.problem
