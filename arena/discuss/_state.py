"""The run directory's `discussion.json`: which discussions count and how they enter the ranking."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.config import DiscussionConfig, Tournament
from arena.discuss._prompt import Templates
from arena.discuss._schema import STATE_FILE
from arena.types import stable_id

__all__ = ["DiscussionState", "discussion_context", "read_state", "write_state"]


@dataclass(frozen=True)
class DiscussionState:
    """The discussion settings of a run directory's latest discussion run."""

    context: str
    outcome: str  # "replace" | "add"
    weight: int
    trigger: list[str]

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON."""
        return asdict(self)


def discussion_context(t: Tournament, cfg: DiscussionConfig, templates: Templates) -> str:
    """Hash of everything a discussion's prompts and requests depend on besides its battle.

    The triggers, the outcome and its weight are not part of it: changing them
    reuses the discussions already logged.
    """
    return stable_id(
        "discussion-context",
        {
            "discussion": templates.discussion,
            "role": templates.role,
            "review_template": t.review_template,
            "review_temperature": t.config.review.temperature,
            "review_max_tokens": t.config.review.max_tokens,
            "temperature": cfg.temperature,
            "temperatures": dict(sorted(cfg.temperatures.items())),
            "max_tokens": cfg.max_tokens,
            "max_turns": cfg.max_turns,
            "stop_on_agreement": cfg.stop_on_agreement,
            "format": "chat",
        },
    )


def write_state(directory: Path, state: DiscussionState) -> None:
    """Write `discussion.json` atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=2))
    tmp.replace(directory / STATE_FILE)


def read_state(directory: Path) -> DiscussionState | None:
    """The run directory's discussion settings; None when no discussion ever ran there."""
    path = directory / STATE_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    return DiscussionState(
        context=str(data["context"]),
        outcome=str(data["outcome"]),
        weight=int(data["weight"]),
        trigger=[str(x) for x in data["trigger"]],
    )
