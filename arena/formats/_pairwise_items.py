"""Pairwise expert-labelled items: a question, two answers of no contestant, expert labels.

The shape of PRD's LFQA evaluation set (`data/lfqa/experts_pairwise_human_preferences.jsonl`),
one row per expert judgment, as JSONL, a JSON array or CSV (same column names):

- `question`, `answer_a`, `answer_b`: the question and the two answers, in the
  order the expert saw them (non-empty strings);
- `overall_preference`: -1 (answer A preferred), 1 (answer B preferred), 0 (a
  tie), or empty/null (no label);
- optional `id` (or `item_id`): the item's id; otherwise an id made from a hash
  of the question and both answers, the same in every file that holds them;
- other fields (`answer_a_type`, `doc_a`, `justification`, ...) are not read.

Several rows of one item (several experts, as in PRD's file: 260 rows, 140
items) are one item with several labels. A row showing an item's answers in
the other order counts as that item, its label mirrored.

arena reads such a file three ways, so a tournament can discuss the items and
score the discussions against the experts:

- as questions (`questions: FILE`): one question per item, its id the item's id;
- as answers (`answers: FILE`): two contestants, `answer_a` and `answer_b`, the
  sides of each item (the model's name, or its `model:`, picks the side);
- as judgments (`--human FILE`): one review per label, by `expert1`,
  `expert2`, ... (the item's first, second, ... label), of `answer_a` (A)
  against `answer_b` (B).

This module knows nothing of questions, answers or judgments objects: the
readers of those shapes call it.
"""

from __future__ import annotations

import csv
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError
from arena.formats._records import Record, read_records

__all__ = [
    "ITEM_SIDES",
    "PairwiseItem",
    "expert_name",
    "is_pairwise_item",
    "item_records",
    "read_pairwise_items",
]

# The contestant names of an item's two sides (model A, model B of its judgments).
ITEM_SIDES = ("answer_a", "answer_b")
_LABELS = {-1.0: "A", 0.0: "tie", 1.0: "B"}
_MIRROR = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True)
class PairwiseItem:
    """One item: its id, question, two answers (as first shown) and its labels (A, B, tie)."""

    id: str
    question: str
    answer_a: str
    answer_b: str
    labels: tuple[str, ...]
    where: str  # the row that introduced it


def expert_name(n: int) -> str:
    """The reviewer name of an item's n-th label (1-based)."""
    return f"expert{n}"


def is_pairwise_item(record: Mapping[str, Any]) -> bool:
    """Whether a record has the fields of a pairwise item (question, both answers, the label)."""
    return {"question", "answer_a", "answer_b", "overall_preference"} <= set(record)


def item_records(path: Path) -> list[Record]:
    """The rows of a file: CSV by its suffix, else JSONL or a JSON array."""
    if path.suffix.lower() != ".csv":
        return read_records(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return [(f"line {n}", dict(row)) for n, row in enumerate(csv.DictReader(handle), 2)]
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise FormatError(path, "", f"cannot read CSV: {exc}") from None


def _text(path: Path, where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise FormatError(path, f"{where}: {key}", "must be a non-empty string")
    return value


def _label(path: Path, where: str, value: Any) -> str | None:
    """-1, 0, 1 (numbers, or their text in CSV) as A, tie, B; None for no label."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or math.isnan(number) or number not in _LABELS:
        raise FormatError(
            path,
            f"{where}: overall_preference",
            f"must be -1 (answer A preferred), 0 (a tie) or 1 (answer B preferred), not {value!r}",
        )
    return _LABELS[number]


def _item_id(path: Path, where: str, obj: Mapping[str, Any], content: Sequence[str]) -> str:
    for key in ("id", "item_id"):
        value = obj.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise FormatError(path, f"{where}: {key}", "must be a string or an integer")
        return str(value)
    digest = hashlib.blake2b("\x1f".join(content).encode(), digest_size=6).hexdigest()
    return f"item-{digest}"


def read_pairwise_items(
    path: Path, records: Sequence[Record] | None = None
) -> tuple[PairwiseItem, ...]:
    """Every item of a file (see the module docstring), in order of first appearance.

    `records`: the file's rows when already read. Raises FormatError naming the
    file, the row and the field.
    """
    rows = list(item_records(path) if records is None else records)
    if not rows:
        raise FormatError(path, "", "no items in the file")
    order: list[tuple[str, str, str]] = []
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    ids: dict[str, tuple[str, str, str]] = {}
    for where, obj in rows:
        if not is_pairwise_item(obj):
            missing = sorted({"question", "answer_a", "answer_b", "overall_preference"} - set(obj))
            raise FormatError(path, where, f"not a pairwise item: missing {', '.join(missing)}")
        question = _text(path, where, obj, "question")
        a, b = _text(path, where, obj, "answer_a"), _text(path, where, obj, "answer_b")
        if a == b:
            raise FormatError(path, f"{where}: answer_b", "is the same text as answer_a")
        label = _label(path, where, obj.get("overall_preference"))
        key = (question, a, b)
        if key not in found and (question, b, a) in found:
            key = (question, b, a)  # the same item, its answers shown the other way round
            label = None if label is None else _MIRROR[label]
        item_id = _item_id(path, where, obj, key)
        if key not in found:
            if item_id in ids:
                raise FormatError(path, f"{where}: id", f"{item_id!r} names two different items")
            ids[item_id] = key
            found[key] = {"id": item_id, "where": where, "labels": []}
            order.append(key)
        elif item_id != found[key]["id"] and any(k in obj for k in ("id", "item_id")):
            raise FormatError(
                path, f"{where}: id", f"{item_id!r}, but this item is {found[key]['id']!r}"
            )
        if label is not None:
            found[key]["labels"].append(label)
    return tuple(
        PairwiseItem(
            id=found[key]["id"],
            question=key[0],
            answer_a=key[1],
            answer_b=key[2],
            labels=tuple(found[key]["labels"]),
            where=found[key]["where"],
        )
        for key in order
    )
