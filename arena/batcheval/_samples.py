"""Samples to score: the JSONL input of `arena batcheval`, or a tournament's answers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from arena.config import ConfigError, read_jsonl_objects

__all__ = ["Sample", "load_samples"]


@dataclass(frozen=True)
class Sample:
    """One text to score, with the context it answers (a question) when there is one."""

    id: str
    text: str
    context: str | None = None
    model: str | None = None  # the contestant that wrote it, in a tournament
    question_id: str | None = None

    def fingerprint(self) -> str:
        """A short hash of what a score depends on: the text and its context."""
        blob = json.dumps([self.text, self.context])
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def load_samples(path: Path) -> tuple[Sample, ...]:
    """Read a samples JSONL file (`id`, `text`, optional `context`); ConfigError if bad."""
    if not path.is_file():
        raise ConfigError(path, "", "samples file not found")
    samples: list[Sample] = []
    seen: set[str] = set()
    for where, obj in read_jsonl_objects(path):
        sid = obj.get("id")
        if sid is None or isinstance(sid, bool | dict | list) or str(sid) == "":
            raise ConfigError(path, f"{where}: id", "missing 'id' (a string or a number)")
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(path, f"{where}: text", "missing 'text' (a non-empty string)")
        context = obj.get("context")
        if context is not None and not isinstance(context, str):
            raise ConfigError(path, f"{where}: context", "'context' must be a string")
        key = str(sid)
        if key in seen:
            raise ConfigError(path, f"{where}: id", f"duplicate sample id '{key}'")
        seen.add(key)
        samples.append(Sample(id=key, text=text, context=context or None))
    if not samples:
        raise ConfigError(path, "", "no samples in file")
    return tuple(samples)
