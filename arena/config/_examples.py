"""The `examples:` pool, loaded and checked (selection and rendering: arena.examples)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from arena.config._errors import ConfigError
from arena.config._sections import ExamplesConfig

__all__ = ["EXAMPLE_VERDICTS", "Example", "ExamplePool", "load_example_pool"]

# A pool item's verdict, in the words the prompt shows it with.
EXAMPLE_VERDICTS = {"A": "answer A is better", "B": "answer B is better", "tie": "a tie"}


@dataclass(frozen=True)
class Example:
    """One human-judged review item of the pool."""

    id: str
    question_id: str
    question: str
    answer_a: str
    answer_b: str
    verdict: str


@dataclass(eq=False)
class ExamplePool:
    """The pool and the section's settings; `chosen` caches each question's choice."""

    config: ExamplesConfig
    items: tuple[Example, ...]
    digest: str  # sha256 of the pool file's bytes
    seed: int = 0
    chosen: dict[str, tuple[Example, ...]] = field(default_factory=dict)
    index: dict[str, object] = field(default_factory=dict)  # the TF-IDF model, once fitted


def load_example_pool(cfg: ExamplesConfig, yaml_path: Path, seed: int = 0) -> ExamplePool:
    """Read and check the pool; ConfigError naming the file, the line and the field."""
    path = Path(cfg.pool)
    if not path.is_absolute():
        path = yaml_path.parent / path
    if not path.is_file():
        raise ConfigError(yaml_path, "examples.pool", f"pool file not found: {path}")
    data = path.read_bytes()
    items: list[Example] = []
    seen: set[str] = set()
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(path, where, f"not JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise ConfigError(path, where, "not a JSON object")
        for key in ("id", "question_id", "question", "answer_a", "answer_b", "verdict"):
            if key not in row or row[key] is None:
                raise ConfigError(path, f"{where}: {key}", "missing")
        if str(row["verdict"]) not in EXAMPLE_VERDICTS:
            raise ConfigError(
                path, f"{where}: verdict", f"{row['verdict']!r} is not one of A, B, tie"
            )
        item = Example(
            str(row["id"]),
            str(row["question_id"]),
            str(row["question"]),
            str(row["answer_a"]),
            str(row["answer_b"]),
            str(row["verdict"]),
        )
        if item.id in seen:
            raise ConfigError(path, f"{where}: id", f"duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise ConfigError(path, "", "the pool holds no example")
    return ExamplePool(cfg, tuple(items), hashlib.sha256(data).hexdigest(), seed)
