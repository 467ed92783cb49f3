"""Question files: arena's own JSONL, MT-bench, arena-hard-auto and AlpacaEval shapes.

Each record is read on its own, by the fields it has:

- arena: `id` or `question_id`; `text`, `question` or `prompt`, or `turns`
  (strings); `category`;
- MT-bench (FastChat): `question_id`, `turns` (strings), `category`,
  `reference` (a reference answer per turn);
- arena-hard v0.1: `question_id`, `turns: [{"content": ...}]`, `category`;
- arena-hard v2: `uid`, `prompt`, `category`;
- AlpacaEval: `instruction` (plus `input` when not empty); `dataset` is the
  category; the id is the position in the file (1, 2, ...) unless `id` is given;
- pairwise items (PRD's LFQA file, JSONL or CSV: `question`, `answer_a`,
  `answer_b`, `overall_preference`): one question per item, its id the item's
  (see `arena.formats._pairwise_items`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError
from arena.formats._pairwise_items import is_pairwise_item, item_records, read_pairwise_items
from arena.formats._records import read_records

QUESTION_FORMATS = ("arena", "mt-bench", "arena-hard", "alpacaeval", "pairwise-items")


@dataclass(frozen=True)
class Question:
    """One question; several turns make a conversation.

    `reference`: a reference answer per turn (MT-bench's math and coding
    questions have one), shown to reviewers through `{reference}`.
    """

    id: str
    turns: tuple[str, ...]
    category: str | None = None
    reference: tuple[str, ...] | None = None


def _question_id(path: Path, where: str, obj: dict[str, Any], index: int) -> str:
    for key in ("question_id", "id", "uid"):
        if key in obj:
            qid = obj[key]
            if isinstance(qid, bool) or not isinstance(qid, (str, int)):
                raise FormatError(
                    path,
                    f"{where}: {key}",
                    f"must be a string or an integer, not {type(qid).__name__}",
                )
            if str(qid) == "":
                raise FormatError(path, f"{where}: {key}", "must not be empty")
            return str(qid)
    if "instruction" in obj:  # AlpacaEval has no ids: the position is the id
        return str(index)
    raise FormatError(path, f"{where}: question_id", "missing 'question_id' or 'id' (or 'uid')")


def turn_text(value: Any) -> str | None:
    """A turn's text: a string, or an object with a string `content` (arena-hard)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _turns(path: Path, where: str, obj: dict[str, Any]) -> tuple[str, ...]:
    if "turns" in obj:
        raw = obj["turns"]
        texts = [turn_text(t) for t in raw] if isinstance(raw, list) else []
        if not texts or not all(t is not None and t.strip() for t in texts):
            raise FormatError(
                path,
                f"{where}: turns",
                'must be a non-empty list of strings (or of {"content": string})',
            )
        return tuple(t for t in texts if t is not None)
    if "instruction" in obj and not any(k in obj for k in ("text", "question", "prompt")):
        text = obj["instruction"]
        if not isinstance(text, str) or not text.strip():
            raise FormatError(path, f"{where}: instruction", "must be a non-empty string")
        extra = obj.get("input")
        if isinstance(extra, str) and extra.strip():
            text = f"{text}\n\n{extra}"
        return (text,)
    for key in ("text", "question", "prompt"):
        if key in obj:
            text = obj[key]
            if not isinstance(text, str) or not text.strip():
                raise FormatError(path, f"{where}: {key}", "must be a non-empty string")
            return (text,)
    raise FormatError(
        path,
        f"{where}: text",
        "missing question text ('turns', 'text', 'question', 'prompt' or 'instruction')",
    )


def _reference(path: Path, where: str, obj: dict[str, Any]) -> tuple[str, ...] | None:
    raw = obj.get("reference")
    if raw is None:
        return None
    if isinstance(raw, str):
        return (raw,) if raw.strip() else None
    texts = [turn_text(t) for t in raw] if isinstance(raw, list) else [None]
    if not all(isinstance(t, str) for t in texts):
        raise FormatError(path, f"{where}: reference", "must be a string or a list of strings")
    kept = tuple(t for t in texts if t is not None)
    return kept if any(t.strip() for t in kept) else None


def _category(path: Path, where: str, obj: dict[str, Any]) -> str | None:
    key = "category"
    cat = obj.get(key)
    if cat is None and "instruction" in obj:
        key, cat = "dataset", obj.get("dataset")
    if isinstance(cat, dict | list):
        kind = "an object" if isinstance(cat, dict) else "a list"
        raise FormatError(path, f"{where}: {key}", f"must be a string or a number, not {kind}")
    if cat is None or str(cat) == "":
        return None
    return str(cat)


def parse_questions(path: Path, records: Sequence[tuple[str, dict[str, Any]]]) -> list[Question]:
    """Questions from records already read (see the module docstring for the shapes)."""
    questions: list[Question] = []
    seen: set[str] = set()
    for index, (where, obj) in enumerate(records, 1):
        qid = _question_id(path, where, obj, index)
        if qid in seen:
            raise FormatError(path, f"{where}: question_id", f"duplicate question id '{qid}'")
        seen.add(qid)
        questions.append(
            Question(
                id=qid,
                turns=_turns(path, where, obj),
                category=_category(path, where, obj),
                reference=_reference(path, where, obj),
            )
        )
    return questions


def read_questions(path: Path) -> tuple[Question, ...]:
    """Every question of a file in any supported shape (JSONL, or a JSON array; pairwise
    items also as CSV)."""
    records = item_records(path) if path.suffix.lower() == ".csv" else read_records(path)
    if records and is_pairwise_item(records[0][1]):
        items = read_pairwise_items(path, records)
        return tuple(Question(id=item.id, turns=(item.question,)) for item in items)
    questions = parse_questions(path, records)
    if not questions:
        raise FormatError(path, "", "no questions in file")
    return tuple(questions)
