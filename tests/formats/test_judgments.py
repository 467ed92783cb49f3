"""Judgment files of AlpacaEval, arena-hard-auto, MT-bench, Chatbot Arena and PRD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena.formats import FormatError, detect_format, read_judgments


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(path: Path, **kw: Any) -> list[tuple[Any, ...]]:
    j = read_judgments(path, **kw)
    c = j.columns
    keys = ("question_id", "model_a", "model_b", "reviewer", "verdict", "p_a", "weight")
    return list(zip(*(c[k] for k in keys), strict=True))


def test_alpacaeval_annotations(tmp_path: Path) -> None:
    base = {"annotator": "weighted_alpaca_eval_gpt4_turbo", "dataset": "koala"}
    rows = [
        {
            **base,
            "instruction": "Hi",
            "generator_1": "ref",
            "generator_2": "m",
            "preference": 1.25,
            "output_1": "hello",
            "output_2": "hey there",
        },
        {
            **base,
            "instruction": "Yo",
            "input": "ctx",
            "generator_1": "ref",
            "generator_2": "m",
            "preference": 0,
            "output_1": "a",
            "output_2": "b",
        },
        {**base, "instruction": "No", "generator_1": "ref", "generator_2": "m", "preference": None},
        {**base, "instruction": "Up", "generator_1": "ref", "generator_2": "m", "preference": 2.0},
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows))
    assert detect_format(path, rows[0]) == "alpacaeval"
    got = _rows(path)
    assert got == [
        ("Hi", "ref", "m", "weighted_alpaca_eval_gpt4_turbo", "A", 0.75, None),
        ("Yo\n\nctx", "ref", "m", "weighted_alpaca_eval_gpt4_turbo", "tie", 0.5, None),
        ("No", "ref", "m", "weighted_alpaca_eval_gpt4_turbo", "invalid", None, None),
        ("Up", "ref", "m", "weighted_alpaca_eval_gpt4_turbo", "B", 0.0, None),
    ]
    j = read_judgments(path)
    assert j.columns["answer_b"][0] == "hey there" and j.columns["category"][0] == "koala"


def test_alpacaeval_bad_preference_names_the_place(tmp_path: Path) -> None:
    row = {"instruction": "Hi", "generator_1": "a", "generator_2": "b", "preference": 2.5}
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([row, row]))
    with pytest.raises(FormatError, match=r"annotations.json: \[0\]: preference: 2.5 is outside"):
        read_judgments(path)


def test_arena_hard_games_swap_and_strong_weight(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "model_judgment" / "gpt-4.1" / "m.jsonl",
        [
            {
                "uid": "u1",
                "category": "hard_prompt",
                "judge": "gpt-4.1",
                "model": "m",
                "baseline": "o3",
                "games": [{"score": "A>>B"}, {"score": "B>A"}],
            },
            {
                "uid": "u2",
                "category": "hard_prompt",
                "judge": "gpt-4.1",
                "model": "m",
                "baseline": "o3",
                "games": [{"score": "A=B"}, None],
            },
        ],
    )
    assert _rows(path) == [
        ("u1", "o3", "m", "gpt-4.1", "A", None, 3.0),
        ("u1", "m", "o3", "gpt-4.1", "B", None, 1.0),
        ("u2", "o3", "m", "gpt-4.1", "tie", None, 1.0),
        ("u2", "m", "o3", "gpt-4.1", "invalid", None, None),
    ]
    assert _rows(path, strong_win_weight=1.0)[0][-1] == 1.0


def test_arena_hard_v01_has_a_fixed_baseline(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "gpt-4-1106-preview" / "m.jsonl",
        [
            {
                "question_id": "q",
                "model": "m",
                "judge": "gpt-4-1106-preview",
                "games": [{"score": "B>>A"}, {"score": "A<<B"}],
            }
        ],
    )
    assert _rows(path) == [
        ("q", "gpt-4-0314", "m", "gpt-4-1106-preview", "B", None, 3.0),
        ("q", "m", "gpt-4-0314", "gpt-4-1106-preview", "B", None, 3.0),
    ]


def test_arena_hard_unknown_label(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "m.jsonl", [{"uid": "u", "model": "m", "games": [{"score": "A?B"}, {}]}]
    )
    with pytest.raises(FormatError, match=r"line 1: games\[0\].score: 'A\?B' is not one of"):
        read_judgments(path)


def test_mt_bench_pairwise_judgments(tmp_path: Path) -> None:
    base = {
        "question_id": 81,
        "model_1": "gpt-4",
        "model_2": "vicuna",
        "judge": ["gpt-4", "pair-v2"],
    }
    path = _jsonl(
        tmp_path / "gpt-4_pair.jsonl",
        [
            {**base, "g1_winner": "model_1", "g2_winner": "model_1", "turn": 1},
            {**base, "g1_winner": "tie", "g2_winner": "error", "turn": 2},
        ],
    )
    assert _rows(path) == [
        ("81", "gpt-4", "vicuna", "gpt-4", "A", None, None),
        ("81", "vicuna", "gpt-4", "gpt-4", "B", None, None),
        ("81", "gpt-4", "vicuna", "gpt-4", "tie", None, None),
        ("81", "vicuna", "gpt-4", "gpt-4", "invalid", None, None),
    ]
    assert read_judgments(path).columns["turn"] == [1, 1, 2, 2]


def test_chatbot_arena_battles_are_the_crowds(tmp_path: Path) -> None:
    conv = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "ans"}]
    path = _jsonl(
        tmp_path / "battles.jsonl",
        [
            {
                "question_id": "a1",
                "model_a": "x",
                "model_b": "y",
                "winner": "tie (bothbad)",
                "judge": "arena_user_1",
                "conversation_a": conv,
                "conversation_b": conv,
            },
            {"question_id": "a2", "model_a": "x", "model_b": "y", "winner": "model_b"},
        ],
    )
    assert _rows(path) == [
        ("a1", "x", "y", "crowd", "tie", None, None),
        ("a2", "x", "y", "crowd", "B", None, None),
    ]
    assert read_judgments(path).columns["answer_a"] == ["ans", None]


def test_prd_review_files_take_models_and_reviewer_from_the_name(tmp_path: Path) -> None:
    rows = [
        {"review_id": "r1", "question_id": 1, "answer1_id": "a", "answer2_id": "b", "score": 1},
        {"review_id": "r2", "question_id": 2, "answer1_id": "c", "answer2_id": "d", "score": "3"},
        {
            "review_id": "r3",
            "question_id": 3,
            "answer1_id": "e",
            "answer2_id": "f",
            "score": [6, 8],
        },
    ]
    path = _jsonl(
        tmp_path
        / "ratings-vicuna-13b"
        / "answer_gpt35-vs-answer_vicuna-13b-vicuna-13b-reviewer_threeclass.jsonl",
        rows,
    )
    assert _rows(path) == [
        ("1", "gpt35", "vicuna-13b", "vicuna-13b", "A", None, None),
        ("2", "gpt35", "vicuna-13b", "vicuna-13b", "tie", None, None),
        ("3", "gpt35", "vicuna-13b", "vicuna-13b", "B", None, None),
    ]
    human = _jsonl(
        tmp_path / "ratings-human" / "answer_bard-vs-answer_gpt4-human-reviewer_threeclass.jsonl",
        [{"question_id": 1, "text": "q", "score": 2}],
    )
    assert _rows(human) == [("1", "bard", "gpt4", "human", "B", None, None)]
    bad = _jsonl(
        tmp_path / "ratings-x" / "answer_a-vs-answer_b-x-reviewer_threeclass.jsonl",
        [{"question_id": 1, "score": 7}],
    )
    with pytest.raises(FormatError, match="line 1: score: 7 is not 1, 2 or 3"):
        read_judgments(bad)


def test_unknown_shapes_are_refused_with_the_expected_fields(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "x.jsonl", [{"foo": 1}])
    with pytest.raises(FormatError, match="not a judgments file this reader knows"):
        read_judgments(path)
    with pytest.raises(FormatError, match="unknown judgments format 'nope'"):
        read_judgments(path, format="nope")


def test_forced_format_names_the_missing_field(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "x.jsonl", [{"model_a": "x", "model_b": "y", "winner": "model_a"}])
    with pytest.raises(FormatError, match="line 1: question_id: missing"):
        read_judgments(path, format="chatbot-arena")


def test_prd_names_without_threeclass(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "ratings-vicuna-13b" / "answer_bard-vs-answer_gpt4-vicuna-13b-reviewer.jsonl",
        [{"question_id": 1, "answer1_id": "a", "answer2_id": "b", "score": "2"}],
    )
    assert _rows(path) == [("1", "bard", "gpt4", "vicuna-13b", "B", None, None)]
