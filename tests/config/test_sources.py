"""Contestants from answer files, references, per-model settings (tournament YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.config import FILE_PROVIDER, ConfigError, load_tournament
from tests.formats._files import MT_QUESTIONS, fastchat_answers, jsonl


def _tournament(tmp: Path, **extra: Any) -> Path:
    jsonl(tmp / "question.jsonl", MT_QUESTIONS)
    jsonl(tmp / "gpt-4.jsonl", fastchat_answers("gpt-4", MT_QUESTIONS[:2], "G"))
    cfg: dict[str, Any] = {
        "name": "mt",
        "questions": "question.jsonl",
        "providers": {"sim": {"type": "sim"}},
        "models": {
            "judge": {"provider": "sim"},
            "local": {"provider": "sim"},
            "gpt-4": {"answers": "gpt-4.jsonl"},
        },
        "contestants": ["gpt-4", "local"],
        "reviewers": ["judge"],
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_answers_file_contestant_is_loaded_and_makes_no_calls(tmp_path: Path) -> None:
    t = load_tournament(_tournament(tmp_path))
    found = t.answer_files["gpt-4"]
    assert found.answers["81"] == ("G answer to Write a haiku.", "G answer to Now make it rhyme.")
    assert found.problems == {"130": "no answer in gpt-4.jsonl"}
    assert t.from_file("gpt-4") and not t.from_file("local")
    assert t.provider_of("gpt-4") == FILE_PROVIDER
    assert t.used_models() == ["local", "judge"]


@pytest.mark.parametrize(
    ("models", "extra", "key", "problem"),
    [
        (
            {"gpt-4": {"answers": "gpt-4.jsonl", "temperature": 0.1}},
            {},
            "models.gpt-4",
            "remove temperature",
        ),
        (
            {"gpt-4": {"answers": "nope.jsonl"}},
            {},
            "models.gpt-4.answers",
            "answers file not found",
        ),
        ({"judge": {}}, {}, "models.judge", "needs a `provider`"),
        ({}, {"reviewers": ["judge", "gpt-4"]}, "reviewers[1]", "cannot judge"),
        ({}, {"references": "refs.jsonl"}, "references", "references file not found"),
    ],
)
def test_bad_sources_are_refused_before_any_call(
    tmp_path: Path, models: dict[str, Any], extra: dict[str, Any], key: str, problem: str
) -> None:
    path = _tournament(tmp_path, models=models, **extra)
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.key == key and problem in info.value.problem


def test_a_file_contestant_with_a_provider_answers_from_the_file_and_reviews(
    tmp_path: Path,
) -> None:
    path = _tournament(
        tmp_path,
        models={"gpt-4": {"answers": "gpt-4.jsonl", "provider": "sim"}},
        reviewers=["judge", "gpt-4"],
    )
    t = load_tournament(path)
    assert t.from_file("gpt-4") and "gpt-4" in t.used_models()
    assert t.answer_files["gpt-4"].answers["81"][0] == "G answer to Write a haiku."


def test_a_file_contestant_cannot_review_by_default(tmp_path: Path) -> None:
    data = yaml.safe_load(_tournament(tmp_path).read_text())
    del data["reviewers"]
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="cannot judge"):
        load_tournament(path)


def test_references_file_fills_question_references(tmp_path: Path) -> None:
    refs = fastchat_answers("gpt-4", MT_QUESTIONS[2:], "R")
    jsonl(tmp_path / "refs.jsonl", refs)
    t = load_tournament(_tournament(tmp_path, references="refs.jsonl"))
    by_id = {q.id: q for q in t.questions}
    assert by_id["130"].reference == ("R answer to Reverse a list.", "R answer to In place?")
    assert by_id["111"].reference == ("21", "24")  # from the question file itself
    assert by_id["81"].reference is None


def test_per_model_settings_change_the_ids_only_when_set(tmp_path: Path) -> None:
    settings = {
        "provider": "sim",
        "system": "Be terse.",
        "reasoning_effort": "high",
        "extra": {"top_k": 20},
        "review": {"max_tokens": 4096},
    }
    plain = load_tournament(_tournament(tmp_path))
    t = load_tournament(_tournament(tmp_path, models={"judge": settings}))
    assert t.review_settings("judge") == (0.0, 4096)
    assert plain.review_settings("judge") == (0.0, 1024)
    fp = t.model_fingerprint("judge")
    assert fp["system"] == "Be terse." and fp["extra"] == {"top_k": 20}
    assert fp["reasoning_effort"] == "high"
    # Unset settings leave the fingerprint (and so every id) as it was.
    assert set(plain.model_fingerprint("judge")) == {
        "name",
        "provider_type",
        "model",
        "temperature",
        "max_tokens",
        "sim",
        "seed",
    }


def test_models_sharing_an_id_on_one_provider_share_its_settings(tmp_path: Path) -> None:
    same = {"provider": "sim", "model": "base"}
    ok = _tournament(tmp_path, models={"judge": same, "local": {**same, "temperature": 0.1}})
    load_tournament(ok)  # temperature travels in each request: fine
    bad = _tournament(tmp_path, models={"judge": same, "local": {**same, "system": "Hi."}})
    with pytest.raises(ConfigError) as info:
        load_tournament(bad)
    assert info.value.key == "models.local" and "not its system" in info.value.problem


def test_reasoning_effort_must_suit_the_provider_type(tmp_path: Path) -> None:
    path = _tournament(
        tmp_path,
        providers={"claude": {"type": "anthropic"}},
        models={"judge": {"provider": "claude", "reasoning_effort": "minimal"}},
    )
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.key == "models.judge.reasoning_effort"
    assert "anthropic accepts" in info.value.problem
