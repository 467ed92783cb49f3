"""The `examples:` pool, loaded and checked (selection and rendering: arena.examples).

`select: fixed` shows the items `ids` lists (hand-picked, as the DSTC11
paper's fixed setting): each id must be in the pool, and each kind the section
applies to needs one of its own.

One JSONL pool may hold two kinds of human-judged items, told apart by their
fields: review items (`id, question_id, question, answer_a, answer_b,
verdict`) for review prompts, and scored items (`id, question_id` (optional),
`context, text, criterion, score`) for BatchEval prompts. Each kind has its own
hash, so editing the items of one kind changes the call ids of that kind only.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.config._errors import ConfigError
from arena.config._sections import ExamplesConfig
from arena.formats import FormatError, read_records

__all__ = [
    "EXAMPLE_VERDICTS",
    "Example",
    "ExamplePool",
    "ScoredExample",
    "load_example_pool",
]

# A pool item's verdict, in the words the prompt shows it with.
EXAMPLE_VERDICTS = {"A": "answer A is better", "B": "answer B is better", "tie": "a tie"}

_REVIEW_FIELDS = ("id", "question_id", "question", "answer_a", "answer_b", "verdict")
_SCORED_FIELDS = ("id", "context", "text", "criterion", "score")
# A row with any of these fields is a scored (BatchEval) item.
_SCORED_MARKS = frozenset({"context", "text", "criterion", "score"})


@dataclass(frozen=True)
class Example:
    """One human-judged review item of the pool."""

    id: str
    question_id: str
    question: str
    answer_a: str
    answer_b: str
    verdict: str


@dataclass(frozen=True)
class ScoredExample:
    """One human-scored BatchEval item of the pool: a text, its context and its score."""

    id: str
    question_id: str | None
    context: str
    text: str
    criterion: str
    score: float
    line: int = field(default=0, compare=False)  # its line in the pool file, for messages


@dataclass(eq=False)
class ExamplePool:
    """The pool and the section's settings; `chosen` caches each question's choice."""

    config: ExamplesConfig
    items: tuple[Example, ...]
    digest: str  # sha256 of the review items (what review ids depend on)
    seed: int = 0
    chosen: dict[str, tuple[Example, ...]] = field(default_factory=dict)
    index: dict[str, object] = field(default_factory=dict)  # TF-IDF models, once fitted
    scored: tuple[ScoredExample, ...] = ()
    scored_digest: str = ""  # sha256 of the scored items (what batch ids depend on)
    path: Path | None = None  # the pool file
    # The scored items chosen for a batch: (criterion, the batch's samples) -> items.
    scored_chosen: dict[
        tuple[str, tuple[tuple[str | None, str | None, str], ...]], tuple[ScoredExample, ...]
    ] = field(default_factory=dict)

    def applies_to(self, target: str) -> bool:
        """Whether the section's `apply_to` lists `target` (`reviews`, `batcheval`)."""
        return target in self.config.apply_to


def _digest(rows: Sequence[dict[str, Any]]) -> str:
    blob = "\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows)
    return hashlib.sha256(blob.encode()).hexdigest()


def _text(path: Path, where: str, row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        raise ConfigError(path, f"{where}: {key}", "missing")
    if isinstance(value, dict | list | bool):
        raise ConfigError(path, f"{where}: {key}", f"must be a string, got {value!r}")
    return str(value)


def _review_item(path: Path, where: str, row: dict[str, Any]) -> Example:
    for key in _REVIEW_FIELDS:
        _text(path, where, row, key)
    if str(row["verdict"]) not in EXAMPLE_VERDICTS:
        raise ConfigError(path, f"{where}: verdict", f"{row['verdict']!r} is not one of A, B, tie")
    return Example(*(str(row[key]) for key in _REVIEW_FIELDS))


def _scored_item(path: Path, where: str, n: int, row: dict[str, Any]) -> ScoredExample:
    for key in _SCORED_FIELDS:
        if key != "score":
            _text(path, where, row, key)
    raw = row.get("score")
    if raw is None:
        raise ConfigError(path, f"{where}: score", "missing")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise ConfigError(path, f"{where}: score", f"not a finite number: {raw!r}")
    if not str(row["text"]).strip():
        raise ConfigError(path, f"{where}: text", "empty")
    qid = row.get("question_id")
    return ScoredExample(
        id=str(row["id"]),
        question_id=None if qid in (None, "") else str(qid),
        context=str(row["context"]),
        text=str(row["text"]),
        criterion=str(row["criterion"]),
        score=float(raw),
        line=n,
    )


def _check_listed(
    cfg: ExamplesConfig, path: Path, yaml_path: Path, review: set[str], scored: set[str]
) -> None:
    """`select: fixed`: every listed id is a pool item, and each kind applied has one."""
    ids = cfg.ids or []
    unknown = [i for i in ids if i not in review and i not in scored]
    if unknown:
        shown = ", ".join(repr(i) for i in unknown[:5])
        raise ConfigError(yaml_path, "examples.ids", f"not in the pool {path.name}: {shown}")
    for target, kind, known in (("reviews", "review", review), ("batcheval", "scored", scored)):
        if target in cfg.apply_to and not any(i in known for i in ids):
            raise ConfigError(
                yaml_path,
                "examples.ids",
                f"lists no {kind} item, which `apply_to: {target}` needs",
            )


def load_example_pool(cfg: ExamplesConfig, yaml_path: Path, seed: int = 0) -> ExamplePool:
    """Read and check the pool; ConfigError naming the file, the line and the field."""
    path = Path(cfg.pool)
    if not path.is_absolute():
        path = yaml_path.parent / path
    if not path.is_file():
        raise ConfigError(yaml_path, "examples.pool", f"pool file not found: {path}")
    try:  # UTF-8, one object a line, bounded nesting, no lone surrogate (arena.formats)
        records = read_records(path, allow_array=False)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None
    items: list[Example] = []
    scored: list[ScoredExample] = []
    rows: dict[str, list[dict[str, Any]]] = {"review": [], "scored": []}
    seen: set[str] = set()
    for where, row in records:
        n = int(where.removeprefix("line "))
        if _SCORED_MARKS & row.keys():
            one = _scored_item(path, where, n, row)
            scored.append(one)
            rows["scored"].append(row)
            item_id = one.id
        else:
            two = _review_item(path, where, row)
            items.append(two)
            rows["review"].append(row)
            item_id = two.id
        if item_id in seen:
            raise ConfigError(path, f"{where}: id", f"duplicate id {item_id!r}")
        seen.add(item_id)
    if not items and not scored:
        raise ConfigError(path, "", "the pool holds no example")
    if "reviews" in cfg.apply_to and not items:
        raise ConfigError(
            path,
            "",
            "the pool holds no review item (id, question_id, question, answer_a, answer_b, "
            "verdict), which `apply_to: reviews` needs",
        )
    if "batcheval" in cfg.apply_to and not scored:
        raise ConfigError(
            path,
            "",
            "the pool holds no scored item (id, context, text, criterion, score), which "
            "`apply_to: batcheval` needs",
        )
    if cfg.ids is not None:
        _check_listed(cfg, path, yaml_path, {e.id for e in items}, {e.id for e in scored})
    return ExamplePool(
        cfg,
        tuple(items),
        _digest(rows["review"]),
        seed,
        scored=tuple(scored),
        scored_digest=_digest(rows["scored"]),
        path=path,
    )
