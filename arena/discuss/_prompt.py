"""Discussion prompts: the template files and rendering one turn's prompt.

The discussion template holds the question, both answers, both initial reviews
(the leader's first), the discussion so far and the role reminder; the role
template is both the system prompt of every turn and that reminder. The blocks
(`[The start of Reviewer 1's initial review]`, `[The start of Reviewer 2's
turn 3]` ...) are written here, not by the template, so that every prompt has
the same structure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.config import CONFIGS_DIR, ConfigError, DiscussionConfig, Question
from arena.review import render_answer, render_question

__all__ = [
    "DEFAULT_ROLE_TEMPLATE",
    "DEFAULT_TEMPLATE",
    "REASK_NOTE",
    "REASK_REVIEW_NOTE",
    "ROLE_PLACEHOLDERS",
    "TEMPLATE_PLACEHOLDERS",
    "Spoken",
    "Templates",
    "load_templates",
    "reviewer_label",
    "render_role",
    "render_turn",
]

DEFAULT_TEMPLATE = CONFIGS_DIR / "prompts" / "discussion.txt"
DEFAULT_ROLE_TEMPLATE = CONFIGS_DIR / "prompts" / "discussion_role.txt"
TEMPLATE_PLACEHOLDERS = (
    "{question}",
    "{answer_a}",
    "{answer_b}",
    "{reviews}",
    "{history}",
    "{role}",
)
ROLE_PLACEHOLDERS = ("{reviewer}", "{other}")
_PLACEHOLDER = re.compile(r"\{(question|answer_a|answer_b|reviews|history|role)\}")

# Appended to a prompt whose reply had no readable preference (asked once more).
REASK_NOTE = (
    "\n\n[Note] Your previous reply did not end with a readable preference. Reply "
    "again, and end with exactly one line: Preference: [[A]], Preference: [[B]] or "
    "Preference: [[tie]]."
)
# The same for an initial review written with the review template.
REASK_REVIEW_NOTE = (
    "\n\n[Note] Your previous reply did not end with a readable verdict. Reply "
    "again, and end with exactly one line: Verdict: [[A]], Verdict: [[B]] or "
    "Verdict: [[tie]]."
)


@dataclass(frozen=True)
class Templates:
    """The discussion template and the role template, loaded and checked."""

    discussion: str
    role: str


def _load(
    path_text: str | None, default: Path, key: str, placeholders: Sequence[str], config_file: Path
) -> str:
    if path_text is None:
        path = default
    else:
        path = Path(path_text)
        if not path.is_absolute():
            path = config_file.parent / path
        if not path.is_file():
            raise ConfigError(config_file, key, f"template file not found: {path}")
    text = path.read_text(encoding="utf-8")
    for placeholder in placeholders:
        if placeholder not in text:
            raise ConfigError(
                config_file, key, f"template {path} lacks the placeholder {placeholder}"
            )
    return text


def load_templates(cfg: DiscussionConfig, config_file: Path) -> Templates:
    """The section's templates (relative paths from the YAML's folder); ConfigError if bad."""
    return Templates(
        discussion=_load(
            cfg.template,
            DEFAULT_TEMPLATE,
            "discussion.template",
            TEMPLATE_PLACEHOLDERS,
            config_file,
        ),
        role=_load(
            cfg.role_template,
            DEFAULT_ROLE_TEMPLATE,
            "discussion.role_template",
            ROLE_PLACEHOLDERS,
            config_file,
        ),
    )


def reviewer_label(position: int) -> str:
    """How the prompts call a discussant: Reviewer 1 (the leader) or Reviewer 2."""
    return f"Reviewer {position}"


def render_role(templates: Templates, position: int) -> str:
    """The role prompt of discussant `position` (1 = leader, 2 = follower)."""
    return (
        templates.role.replace("{reviewer}", reviewer_label(position)).replace(
            "{other}", reviewer_label(3 - position)
        )
    ).strip()


@dataclass(frozen=True)
class Spoken:
    """One readable turn: who (1 = leader, 2 = follower) said what."""

    position: int
    text: str


def _block(title: str, body: str) -> str:
    return f"[The start of {title}]\n{body.strip()}\n[The end of {title}]"


def render_turn(
    templates: Templates,
    question: Question,
    answer_a: Sequence[str],
    answer_b: Sequence[str],
    initial: tuple[str, str],
    history: Sequence[Spoken],
    position: int,
) -> str:
    """The user prompt of one turn for discussant `position` (plain replacement).

    `initial` holds the leader's and the follower's initial reviews, in that
    order; `history` every readable turn so far.
    """
    reviews = "\n\n".join(
        _block(f"{reviewer_label(k)}'s initial review", text) for k, text in enumerate(initial, 1)
    )
    turns = (
        "\n\n".join(
            _block(f"{reviewer_label(s.position)}'s turn {n}", s.text)
            for n, s in enumerate(history, 1)
        )
        or "(no turns yet)"
    )
    values = {
        "question": render_question(question),
        "answer_a": render_answer(question, answer_a),
        "answer_b": render_answer(question, answer_b),
        "reviews": reviews,
        "history": turns,
        "role": render_role(templates, position),
    }
    # One pass over the template: answers and reviews may contain "{...}" text.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], templates.discussion)
