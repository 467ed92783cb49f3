"""Reading records: JSONL (one object a line) or one JSON array of objects.

JSONL lines end at "\n" only (a "\r" before it is dropped): Unicode line
separators such as U+2028 are legal inside JSON strings, and arena-hard v2.0's
own files hold them, so `str.splitlines` would cut records in two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError

__all__ = [
    "MAX_JSON_DEPTH",
    "Record",
    "json_error",
    "jsonl_lines",
    "load_json",
    "read_records",
    "read_text",
]

Record = tuple[str, dict[str, Any]]  # (where, object): "line 3" or "[2]"

# A JSON escape of a UTF-16 surrogate ("\ud800"): only a pair of them is a character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# The same with its last two digits (whether a pair's halves come in order).
_SURROGATE_CODE = re.compile(r"\\u([dD][89a-fA-F][0-9a-fA-F]{2})")
_SURROGATE = re.compile("[\ud800-\udfff]")
# How deep a record's arrays and objects may nest: far past any real record, well
# short of the depth where decoding (or walking) it would exhaust the stack.
MAX_JSON_DEPTH = 100
# Characters of context shown either side of a JSON error.
_EXCERPT = 24


def read_text(path: Path) -> str:
    """A file's UTF-8 text; FormatError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(path, "", "file not found") from None
    except IsADirectoryError:
        raise FormatError(path, "", "is a directory, expected a file") from None
    except UnicodeDecodeError as exc:
        raise FormatError(path, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise FormatError(path, "", f"cannot read: {exc.strerror}") from None


def jsonl_lines(content: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line, split on "\\n" only."""
    for lineno, line in enumerate(content.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if line.strip():
            yield lineno, line


def _excerpt(text: str, pos: int) -> str:
    """The text around `pos`, escaped so control and separator characters show."""
    start = max(0, pos - _EXCERPT)
    before = text[start:pos]
    after = text[pos : pos + _EXCERPT]
    lead = "..." if start > 0 else ""
    tail = "..." if pos + _EXCERPT < len(text) else ""
    return f"{lead}{_visible(before)} >>> {_visible(after)}{tail}"


def _visible(text: str) -> str:
    """`text` with line breaks, separators and other unprintable characters escaped."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def json_error(exc: json.JSONDecodeError, line: int | None = None) -> tuple[str, str]:
    """(where, problem) of a JSON error: line and column, the message and an excerpt.

    `line`: the file's line number when `exc` comes from parsing one JSONL line.
    """
    number = exc.lineno if line is None else line + exc.lineno - 1
    where = f"line {number}, column {exc.colno}"
    return where, f"invalid JSON: {exc.msg}, near: {_excerpt(exc.doc, exc.pos)}"


def _depth(value: Any) -> int:
    """How deep `value`'s lists and dicts nest (a scalar: 0), without recursion."""
    if not isinstance(value, dict | list):
        return 0
    deepest = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack and deepest <= MAX_JSON_DEPTH:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):  # scalars add no depth: not stacked
                stack.append((child, depth + 1))
    return deepest


def load_json(path: Path, text: str, line: int | None = None) -> Any:
    """`text` decoded as JSON, nested at most MAX_JSON_DEPTH deep; FormatError names the
    file and the line (`line`: the file's line when `text` is one JSONL line)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, *json_error(exc, line)) from None
    except RecursionError:
        value = None
        deep = True
    else:
        deep = _depth(value) > MAX_JSON_DEPTH
    if deep:
        where = "" if line is None else f"line {line}"
        raise FormatError(
            path, where, f"nested deeper than {MAX_JSON_DEPTH} levels (arrays and objects)"
        )
    return value


def read_records(path: Path, *, allow_array: bool = True) -> list[Record]:
    """Every object of a JSONL file, or of a JSON array (AlpacaEval's outputs), with its place.

    Blank lines are skipped. A file whose first character is `[` is read as
    one JSON array when `allow_array`; each item must be an object.
    """
    content = read_text(path)
    if allow_array and content.lstrip().startswith("["):
        return _array_records(path, content)
    records: list[Record] = []
    for lineno, line in jsonl_lines(content):
        obj = load_json(path, line, lineno)
        if not isinstance(obj, dict):
            raise FormatError(path, f"line {lineno}", "each line must be a JSON object")
        if _lone_surrogate_escape(line):
            _check_text(path, f"line {lineno}", obj)
        records.append((f"line {lineno}", obj))
    return records


def _array_records(path: Path, content: str) -> list[Record]:
    items = load_json(path, content)
    if not isinstance(items, list):  # pragma: no cover - starts with "[" so it is a list
        raise FormatError(path, "", "expected a JSON array of objects")
    records: list[Record] = []
    escapes = _lone_surrogate_escape(content)
    for i, obj in enumerate(items):
        if not isinstance(obj, dict):
            raise FormatError(path, f"[{i}]", "each item must be a JSON object")
        if escapes:
            _check_text(path, f"[{i}]", obj)
        records.append((f"[{i}]", obj))
    return records


def _lone_surrogate_escape(text: str) -> bool:
    """Whether JSON `text` may escape a lone surrogate: a high one ("\\ud83d") not followed
    at once by a low one, or a low one not preceded by a high one.

    Emoji escaped as pairs (AlpacaEval's files hold thousands) are no reason to walk
    every record; a doubtful case answers True (the walk, `_check_text`, decides).
    """
    if _SURROGATE_ESCAPE.search(text) is None:
        return False
    paired_low = -1  # where the low half of the last pair starts
    for found in _SURROGATE_CODE.finditer(text):
        start = found.start()
        backslashes = 1
        while start - backslashes >= 0 and text[start - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            continue  # an escaped backslash and a literal "u...": no escape
        if int(found.group(1), 16) >= 0xDC00:
            if start != paired_low:
                return True
            continue
        follower = _SURROGATE_CODE.match(text, found.end())
        if follower is None or int(follower.group(1), 16) < 0xDC00:
            return True
        paired_low = found.end()
    return False


def _check_text(path: Path, where: str, value: Any, field: str = "") -> None:
    """FormatError for a lone UTF-16 surrogate ("\\ud800" unpaired) in any string of a record."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        if found is not None:
            place = f"{where}: {field}" if field else where
            code = f"\\u{ord(found.group()):04x}"
            raise FormatError(
                path,
                place,
                f"lone surrogate {code} at character {found.start()}: not valid Unicode",
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(path, where, key, field)
            _check_text(path, where, item, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_text(path, where, item, f"{field}[{i}]")
