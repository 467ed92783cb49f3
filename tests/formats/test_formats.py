"""Question and answer files of MT-bench, arena-hard-auto and AlpacaEval (arena.formats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.formats import FormatError, read_answer_file, read_questions
from tests.formats._files import (
    ALPACA_INSTRUCTIONS,
    ARENA_HARD_V01_QUESTIONS,
    ARENA_HARD_V2_QUESTIONS,
    MT_QUESTIONS,
    alpaca_outputs,
    arena_hard_v01_answers,
    arena_hard_v2_answers,
    fastchat_answers,
    json_list,
    jsonl,
)


def test_mt_bench_questions_keep_category_and_reference(tmp_path: Path) -> None:
    qs = read_questions(jsonl(tmp_path / "question.jsonl", MT_QUESTIONS))
    assert [q.id for q in qs] == ["81", "111", "130"]
    assert qs[1].category == "math" and qs[1].reference == ("21", "24")
    assert qs[0].reference is None and qs[0].turns == ("Write a haiku.", "Now make it rhyme.")


def test_arena_hard_questions_both_versions(tmp_path: Path) -> None:
    v01 = read_questions(jsonl(tmp_path / "v01.jsonl", ARENA_HARD_V01_QUESTIONS))
    assert [(q.id, q.turns, q.category) for q in v01] == [
        ("a1b2", ("Write a bash loop.",), "arena-hard-v0.1"),
        ("c3d4", ("Prove sqrt(2) is irrational.",), "arena-hard-v0.1"),
    ]
    v2 = read_questions(jsonl(tmp_path / "v2.jsonl", ARENA_HARD_V2_QUESTIONS))
    assert [(q.id, q.turns, q.category) for q in v2] == [
        ("u1", ("Sort a dict.",), "hard_prompt"),
        ("u2", ("A sonnet.",), "creative_writing"),
    ]


def test_alpacaeval_instruction_set_is_a_json_list(tmp_path: Path) -> None:
    qs = read_questions(json_list(tmp_path / "alpaca_eval.json", alpaca_outputs("gpt4", "ref")))
    assert [q.id for q in qs] == ["1", "2", "3"]
    assert qs[1].turns == ("What is a haiku?",) and qs[1].category == "koala"
    assert all(q.reference is None for q in qs)  # the baseline output is not a reference


def test_fastchat_answers_match_by_question_id(tmp_path: Path) -> None:
    qs = read_questions(jsonl(tmp_path / "q.jsonl", MT_QUESTIONS))
    rows = fastchat_answers("vicuna", MT_QUESTIONS[:2], "V")
    found = read_answer_file(jsonl(tmp_path / "vicuna.jsonl", rows), qs)
    assert found.format == "fastchat" and found.model_ids == ("vicuna",)
    assert found.answers["81"] == ("V answer to Write a haiku.", "V answer to Now make it rhyme.")
    assert found.problems == {"130": "no answer in vicuna.jsonl"}


def test_arena_hard_answers_both_versions(tmp_path: Path) -> None:
    v01q = read_questions(jsonl(tmp_path / "q1.jsonl", ARENA_HARD_V01_QUESTIONS))
    v01 = read_answer_file(
        jsonl(tmp_path / "a1.jsonl", arena_hard_v01_answers("gpt-4-0314", "G")), v01q
    )
    assert v01.format == "arena-hard" and v01.answers["a1b2"] == ("G says Write a bash loop.",)
    v2q = read_questions(jsonl(tmp_path / "q2.jsonl", ARENA_HARD_V2_QUESTIONS))
    v2 = read_answer_file(jsonl(tmp_path / "a2.jsonl", arena_hard_v2_answers("o3-mini", "O")), v2q)
    assert v2.format == "arena-hard" and v2.model_ids == ("o3-mini",)
    assert v2.answers == {"u1": ("O on Sort a dict.",), "u2": ("O on A sonnet.",)}


def test_alpacaeval_outputs_match_by_instruction_text(tmp_path: Path) -> None:
    qs = read_questions(
        jsonl(
            tmp_path / "q.jsonl",
            [
                {"id": "colors", "text": "Name three colors."},
                {"id": "other", "text": "Not in the outputs."},
            ],
        )
    )
    found = read_answer_file(json_list(tmp_path / "out.json", alpaca_outputs("mine", "M")), qs)
    assert found.format == "alpacaeval"
    assert found.answers == {"colors": ("M: Name three colors.",)}
    assert "other" in found.problems


def test_error_markers_empty_answers_and_turn_counts_are_problems(tmp_path: Path) -> None:
    qs = read_questions(jsonl(tmp_path / "q.jsonl", MT_QUESTIONS))
    rows = fastchat_answers("m", MT_QUESTIONS, "X")
    rows[0]["choices"][0]["turns"][1] = "$ERROR$"
    rows[1]["choices"][0]["turns"] = ["only one"]
    rows[2]["choices"][0]["turns"][0] = "  "
    found = read_answer_file(jsonl(tmp_path / "m.jsonl", rows), qs)
    assert found.answers == {}
    assert "error marker" in found.problems["81"] and "m.jsonl line 1" in found.problems["81"]
    assert "1 answer turn(s), the question has 2" in found.problems["111"]
    assert "turn 1 is empty" in found.problems["130"]


def test_the_last_record_of_a_question_counts(tmp_path: Path) -> None:
    qs = read_questions(jsonl(tmp_path / "q.jsonl", MT_QUESTIONS[:1]))
    first = fastchat_answers("m", MT_QUESTIONS[:1], "old")
    again = fastchat_answers("m", MT_QUESTIONS[:1], "new")
    found = read_answer_file(jsonl(tmp_path / "m.jsonl", first + again), qs)
    assert found.answers["81"][0].startswith("new")


def test_a_file_of_several_models_needs_a_choice(tmp_path: Path) -> None:
    qs = read_questions(jsonl(tmp_path / "q.jsonl", MT_QUESTIONS))
    path = jsonl(
        tmp_path / "all.jsonl",
        fastchat_answers("a", MT_QUESTIONS, "A") + fastchat_answers("b", MT_QUESTIONS, "B"),
    )
    with pytest.raises(FormatError, match=r"several models \(a, b\)"):
        read_answer_file(path, qs)
    assert read_answer_file(path, qs, select="b").answers["81"][0].startswith("B ")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"question_id": 1, "text": "x"}\n', "not an answer record"),
        ('{"question_id": 1, "choices": []}\n', "expected a list whose first item has 'turns'"),
        ('{"question_id": 1, "choices": [{"turns": [3]}]}\n', "must be strings"),
        ('{"uid": "u", "messages": [{"role": "assistant", "content": 5}]}\n', "assistant content"),
        ('[{"instruction": "x", "output": 3}]', "output: must be a string"),
        ('{"choices": [{"turns": ["a"]}]}\n', "missing the question id"),
        ("", "no answers in file"),
        ("[1, 2]", "[0]: each item must be a JSON object"),
        ("[{", "invalid JSON"),
    ],
)
def test_bad_answer_files_name_the_place(tmp_path: Path, content: str, problem: str) -> None:
    qs = read_questions(jsonl(tmp_path / "q.jsonl", MT_QUESTIONS))
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(FormatError) as info:
        read_answer_file(path, qs)
    assert problem in str(info.value) and "bad.jsonl" in str(info.value)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"question_id": 1, "turns": [{"text": "x"}]}, "turns: must be a non-empty list"),
        ({"uid": "u", "prompt": ""}, "prompt: must be a non-empty string"),
        ({"instruction": 3}, "instruction: must be a non-empty string"),
        ({"id": 1, "text": "x", "reference": [1]}, "reference: must be a string or a list"),
        ({"uid": ["x"], "prompt": "x"}, "uid: must be a string or an integer"),
    ],
)
def test_bad_question_records_name_the_field(
    tmp_path: Path, row: dict[str, object], problem: str
) -> None:
    with pytest.raises(FormatError) as info:
        read_questions(jsonl(tmp_path / "q.jsonl", [row]))
    assert problem in str(info.value) and "line 1" in str(info.value)


def test_alpaca_questions_ids_are_positions_unless_given(tmp_path: Path) -> None:
    rows = [dict(r) for r in ALPACA_INSTRUCTIONS]
    rows[0]["id"] = "first"
    qs = read_questions(jsonl(tmp_path / "a.jsonl", rows))
    assert [q.id for q in qs] == ["first", "2", "3"]


def test_jsonl_splits_on_newline_only(tmp_path: Path) -> None:
    """U+2028 / U+2029 / U+0085 are legal inside JSON strings (arena-hard v2.0 has them)."""
    path = tmp_path / "question.jsonl"
    texts = ["one\u2028two", "para\u2029graph", "next\x85line", "form\x0cfeed"]
    rows = [{"uid": f"u{i}", "prompt": t, "category": "c"} for i, t in enumerate(texts)]
    path.write_bytes("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode())
    qs = read_questions(path)
    assert [q.turns[0] for q in qs] == texts
    answers = tmp_path / "model.jsonl"
    answers.write_text(
        "\n".join(
            json.dumps(
                {"uid": f"u{i}", "model": "m", "messages": [{"role": "assistant", "content": t}]},
                ensure_ascii=False,
            )
            for i, t in enumerate(texts)
        )
    )
    found = read_answer_file(answers, qs)
    assert [found.answers[q.id][0] for q in qs] == texts and not found.problems


def test_json_error_names_line_column_and_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "1", "text": "fine"}\n\n{"id": "2", "text": "broken\n')
    with pytest.raises(FormatError) as info:
        read_questions(path)
    message = str(info.value)
    assert "q.jsonl: line 3, column 21: invalid JSON: Unterminated string" in message
    assert message.endswith('near: {"id": "2", "text":  >>> "broken')
    array = tmp_path / "a.json"
    array.write_text('[\n  {"instruction": "x"},\n  {"instruction": "y",}\n]')
    expected = r'a.json: line 3, column 23: invalid JSON: .*near: .*"y", >>> }\\n]$'
    with pytest.raises(FormatError, match=expected):
        read_questions(array)
