"""The types of a judgment record's fields, checked before any reader uses them.

A judgments file of any format (arena's own, AlpacaEval, arena-hard,
MT-bench, Chatbot Arena, PRD) names models, reviewers, questions, verdicts
and categories with strings or numbers. A list or an object where one of
those belongs, a number that is not finite, a turn that is not 1, 2, ...
or a conversation that is not a list of messages is bad input: refused
naming the file, the record and the field, never turned into a model named
`{'x': 1}` or a tie.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError

__all__ = ["SCALAR_FIELDS", "check_judgment_record", "check_turn"]

# Fields that hold one string or number (or null) in every format that has them.
SCALAR_FIELDS = frozenset(
    {
        # arena's own and Chatbot Arena
        "question_id",
        "model_a",
        "model_b",
        "reviewer",
        "verdict",
        "p_a",
        "weight",
        "category",
        "turn",
        "cost_usd",
        "answer_a",
        "answer_b",
        "winner",
        # AlpacaEval
        "instruction",
        "input",
        "generator_1",
        "generator_2",
        "output_1",
        "output_2",
        "annotator",
        "dataset",
        "preference",
        # arena-hard and MT-bench
        "uid",
        "model",
        "baseline",
        "model_1",
        "model_2",
        "g1_winner",
        "g2_winner",
    }
)
# Style counts of arena's own files (`length_a`, `headers_b`, ...).
_STYLE_PREFIXES = ("length_", "headers_", "lists_", "bold_")
# AlpacaEval writes a failed annotation's preference as NaN: read as invalid.
_NAN_ALLOWED = frozenset({"preference"})


def _kind(value: Any) -> str:
    return (
        "an object"
        if isinstance(value, dict)
        else "a list"
        if isinstance(value, list)
        else ("true/false")
    )


def _scalar(path: Path, where: str, key: str, value: Any) -> None:
    if value is None or isinstance(value, str):
        return
    if isinstance(value, dict | list | bool):
        raise FormatError(
            path, f"{where}: {key}", f"expected a string or a number, not {_kind(value)}: {value!r}"
        )
    if isinstance(value, float) and not math.isfinite(value) and key not in _NAN_ALLOWED:
        raise FormatError(path, f"{where}: {key}", f"{value!r} is not a finite number")


def check_turn(path: Path, where: str, value: Any) -> None:
    """A `turn` is null or a whole number >= 1 (also as text: "2")."""
    if value is None:
        return
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number != int(number) or number < 1:
        raise FormatError(path, f"{where}: turn", f"{value!r} is not a turn number (1, 2, ...)")


def _score(path: Path, where: str, value: Any) -> None:
    """`score`: one number (or text), or PRD's pair of numbers."""
    if isinstance(value, list):
        if len(value) != 2:
            raise FormatError(
                path, f"{where}: score", f"a score pair has two numbers, not {value!r}"
            )
        for item in value:
            if (
                isinstance(item, bool)
                or not isinstance(item, int | float)
                or not math.isfinite(item)
            ):
                raise FormatError(
                    path, f"{where}: score", f"a score pair holds two finite numbers: {value!r}"
                )
        return
    _scalar(path, where, "score", value)


def _conversation(path: Path, where: str, key: str, value: Any) -> None:
    """A Chatbot Arena conversation: a list of messages, each {role, content}."""
    if value is None:
        return
    if not isinstance(value, list):
        raise FormatError(
            path,
            f"{where}: {key}",
            f"expected a list of messages ({{role, content}}), not {type(value).__name__}",
        )
    for i, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise FormatError(path, f"{where}: {key}[{i}]", "expected a message {role, content}")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise FormatError(
                path, f"{where}: {key}[{i}].content", "expected a string (the message's text)"
            )


def check_judgment_record(path: Path, where: str, record: Mapping[str, Any]) -> None:
    """FormatError for the first field of a judgment record whose type is wrong (see the
    module); the readers then check what each value means."""
    for key, value in record.items():
        if key in SCALAR_FIELDS or key.startswith(_STYLE_PREFIXES):
            _scalar(path, where, key, value)
        elif key == "score":
            _score(path, where, value)
        elif key in ("conversation_a", "conversation_b"):
            _conversation(path, where, key, value)
    if "turn" in record:
        check_turn(path, where, record["turn"])
