"""Answer files written by other tools, matched to a tournament's questions.

- FastChat / MT-bench `model_answer/*.jsonl`: `question_id`, `model_id`,
  `choices[0].turns` (strings);
- arena-hard-auto v0.1: the same with `choices[0].turns[].content`;
- arena-hard-auto v2: `uid`, `model`, `messages` (the assistant messages'
  `content`, a string or `{"answer": ...}`);
- AlpacaEval outputs (a JSON list): `instruction`, `output`, `generator`,
  matched to the question whose text is the instruction;
- PRD (and FastChat's older) `answer_<model>.jsonl`: `question_id`, `text`,
  `model_id` (and `answer_id`);
- pairwise items (PRD's LFQA file, JSONL or CSV): the answers of the models
  `answer_a` and `answer_b`, the two sides of every item (see
  `arena.formats._pairwise_items`).

When a question has several records, the last one counts (as those tools
read their own files). A file that mixes several models is narrowed to the
one named by `select`. An answer that is empty, or FastChat's error marker
`$ERROR$`, is no answer: the question is listed in `problems` with the reason,
as is every question the file has no answer for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError
from arena.formats._pairwise_items import (
    ITEM_SIDES,
    is_pairwise_item,
    item_records,
    read_pairwise_items,
)
from arena.formats._questions import Question, turn_text
from arena.formats._records import Record, read_records

ANSWER_FORMATS = ("fastchat", "arena-hard", "alpacaeval", "prd", "pairwise-items")

# What FastChat's and arena-hard v0.1's answer scripts write when the API call failed.
ERROR_MARKER = "$ERROR$"


@dataclass(frozen=True)
class AnswerFile:
    """A file's answers to the tournament's questions, and why others are missing."""

    path: Path
    format: str  # one of ANSWER_FORMATS (the first record's)
    model_ids: tuple[str, ...]  # the model ids the file names, in order of appearance
    answers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # question id -> turns
    problems: dict[str, str] = field(default_factory=dict)  # question id -> reason


@dataclass(frozen=True)
class _Record:
    where: str
    format: str
    key: str  # question id, or the instruction text (AlpacaEval)
    model: str | None
    turns: tuple[str, ...] | None  # None: unreadable turns (see `problem`)
    problem: str | None = None


def _str_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    return str(value)


def _id_of(path: Path, where: str, obj: dict[str, Any], keys: Sequence[str]) -> str:
    for key in keys:
        value = obj.get(key)
        if value is not None and not isinstance(value, (dict, list, bool)) and str(value) != "":
            return str(value)
    raise FormatError(path, where, f"missing the question id ('{keys[0]}')")


def _choices_record(path: Path, where: str, obj: dict[str, Any]) -> _Record:
    qid = _id_of(path, where, obj, ("question_id", "uid", "id"))
    choices = obj["choices"]
    first = choices[0] if isinstance(choices, list) and choices else None
    raw = first.get("turns") if isinstance(first, dict) else None
    if not isinstance(raw, list):
        raise FormatError(path, f"{where}: choices", "expected a list whose first item has 'turns'")
    texts = [turn_text(t) for t in raw]
    if not all(isinstance(t, str) for t in texts):
        raise FormatError(
            path, f"{where}: choices[0].turns", 'must be strings or {"content": string} objects'
        )
    fmt = "arena-hard" if any(isinstance(t, dict) for t in raw) else "fastchat"
    model = _str_or_none(obj.get("model_id", obj.get("model")))
    return _Record(where, fmt, qid, model, tuple(t for t in texts if t is not None))


def _assistant_text(content: Any) -> str | None:
    if isinstance(content, dict):
        content = content.get("answer")
    return content if isinstance(content, str) else None


def _messages_record(path: Path, where: str, obj: dict[str, Any]) -> _Record:
    qid = _id_of(path, where, obj, ("uid", "question_id", "id"))
    messages = obj["messages"]
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise FormatError(path, f"{where}: messages", "must be a list of {role, content} objects")
    texts = [_assistant_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
    if not all(isinstance(t, str) for t in texts):
        raise FormatError(
            path,
            f"{where}: messages",
            'an assistant content must be a string or {"answer": string}',
        )
    model = _str_or_none(obj.get("model", obj.get("model_id")))
    return _Record(where, "arena-hard", qid, model, tuple(t for t in texts if t is not None))


def _alpaca_record(path: Path, where: str, obj: dict[str, Any]) -> _Record:
    instruction, output = obj["instruction"], obj["output"]
    if not isinstance(instruction, str) or not instruction.strip():
        raise FormatError(path, f"{where}: instruction", "must be a non-empty string")
    if not isinstance(output, str):
        raise FormatError(path, f"{where}: output", "must be a string")
    extra = obj.get("input")
    if isinstance(extra, str) and extra.strip():
        instruction = f"{instruction}\n\n{extra}"
    return _Record(
        where, "alpacaeval", instruction.strip(), _str_or_none(obj.get("generator")), (output,)
    )


def _text_record(path: Path, where: str, obj: dict[str, Any]) -> _Record:
    qid = _id_of(path, where, obj, ("question_id", "id"))
    text = obj["text"]
    if not isinstance(text, str):
        raise FormatError(path, f"{where}: text", "must be a string")
    return _Record(where, "prd", qid, _str_or_none(obj.get("model_id")), (text,))


def _record(path: Path, where: str, obj: dict[str, Any]) -> _Record:
    if "text" in obj and ("answer_id" in obj or "model_id" in obj):
        return _text_record(path, where, obj)
    if "choices" in obj:
        return _choices_record(path, where, obj)
    if "messages" in obj:
        return _messages_record(path, where, obj)
    if "instruction" in obj and "output" in obj:
        return _alpaca_record(path, where, obj)
    raise FormatError(
        path,
        where,
        "not an answer record: expected 'choices' (FastChat, arena-hard v0.1), "
        "'messages' (arena-hard v2), 'instruction' and 'output' (AlpacaEval) or "
        "'text' and 'model_id' (PRD)",
    )


def _item_answers(path: Path, rows: Sequence[Record]) -> list[_Record]:
    """Both sides of every pairwise item, as the answers of the models `answer_a`, `answer_b`."""
    side_a, side_b = ITEM_SIDES
    out: list[_Record] = []
    for item in read_pairwise_items(path, rows):
        out.append(_Record(item.where, "pairwise-items", item.id, side_a, (item.answer_a,)))
        out.append(_Record(item.where, "pairwise-items", item.id, side_b, (item.answer_b,)))
    return out


def _problem(turns: tuple[str, ...], question: Question) -> str | None:
    if len(turns) != len(question.turns):
        return f"has {len(turns)} answer turn(s), the question has {len(question.turns)}"
    for i, text in enumerate(turns, 1):
        if text.strip() == ERROR_MARKER:
            return f"turn {i} is the error marker {ERROR_MARKER}, not an answer"
        if not text.strip():
            return f"turn {i} is empty"
    return None


def read_answer_file(
    path: Path, questions: Sequence[Question], *, select: str | None = None
) -> AnswerFile:
    """The answers a file holds for `questions` (JSONL or a JSON array, any supported shape).

    `select`: the model id to keep when the file holds answers of several models.
    """
    rows = item_records(path) if path.suffix.lower() == ".csv" else read_records(path)
    if rows and is_pairwise_item(rows[0][1]):
        records = _item_answers(path, rows)
    else:
        records = [_record(path, where, obj) for where, obj in rows]
    if not records:
        raise FormatError(path, "", "no answers in file")
    model_ids = tuple(dict.fromkeys(r.model for r in records if r.model is not None))
    if len(model_ids) > 1:
        if select not in model_ids:
            raise FormatError(
                path,
                "",
                f"holds answers of several models ({', '.join(model_ids)}); name one as the "
                "model's `model:`",
            )
        records = [r for r in records if r.model == select]
    by_key: dict[str, _Record] = {}
    for r in records:
        by_key[r.key] = r  # the last record of a question counts
    alpaca = records[0].format == "alpacaeval"
    result = AnswerFile(path, records[0].format, model_ids)
    for q in questions:
        key = q.turns[0].strip() if alpaca else q.id
        rec = by_key.get(key)
        if rec is None or rec.turns is None:
            result.problems[q.id] = f"no answer in {path.name}"
            continue
        problem = _problem(rec.turns, q)
        if problem is not None:
            result.problems[q.id] = f"{path.name} {rec.where}: {problem}"
        else:
            result.answers[q.id] = rec.turns
    return result
