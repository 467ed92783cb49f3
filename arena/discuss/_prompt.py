"""Discussion prompts: the template files and the chat messages of one turn.

A turn is sent as a real multi-message chat, as in the paper:

- system: the role prompt of the speaker (`You are Reviewer 1 ...`);
- user: the opening, i.e. the discussion template filled with the question,
  both answers and both initial reviews (the leader's first);
- then every turn so far, each a message of its speaker's role: the speaker's
  own earlier turns as `assistant` messages (its own words, verbatim), the
  other reviewer's turns as `user` messages in a `[The start of Reviewer 2's
  turn 2]` block.

Every user message ends with the role reminder (the role prompt again), so the
reminder follows each of the other reviewer's turns. The follower's first turn
comes right after the opening and the leader's turn 1, which then share one user
message (chat APIs expect user and assistant messages to alternate). The blocks
are written here, not by the template, so every prompt has the same structure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.config import CONFIGS_DIR, ConfigError, DiscussionConfig, Question
from arena.review import render_answer, render_question
from arena.types import Message

__all__ = [
    "DEFAULT_ROLE_TEMPLATE",
    "DEFAULT_TEMPLATE",
    "REASK_NOTE",
    "REASK_REVIEW_NOTE",
    "ROLE_PLACEHOLDERS",
    "RETIRED_PLACEHOLDERS",
    "TEMPLATE_PLACEHOLDERS",
    "Spoken",
    "Templates",
    "load_templates",
    "reviewer_label",
    "render_messages",
    "render_opening",
    "render_role",
]

DEFAULT_TEMPLATE = CONFIGS_DIR / "prompts" / "discussion.txt"
DEFAULT_ROLE_TEMPLATE = CONFIGS_DIR / "prompts" / "discussion_role.txt"
TEMPLATE_PLACEHOLDERS = ("{question}", "{answer_a}", "{answer_b}", "{reviews}")
# Placeholders of the single-message format, which the chat format has no use
# for: the turns are messages of their own and the role reminder ends each one.
RETIRED_PLACEHOLDERS = ("{history}", "{role}")
ROLE_PLACEHOLDERS = ("{reviewer}", "{other}")
_PLACEHOLDER = re.compile(r"\{(question|answer_a|answer_b|reviews)\}")

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
    if placeholders is TEMPLATE_PLACEHOLDERS:
        for placeholder in RETIRED_PLACEHOLDERS:
            if placeholder in text:
                raise ConfigError(
                    config_file,
                    key,
                    f"template {path} has the placeholder {placeholder}, which is no longer "
                    "used: turns are sent as chat messages, each user message ending with the "
                    "role reminder",
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


def render_opening(
    templates: Templates,
    question: Question,
    answer_a: Sequence[str],
    answer_b: Sequence[str],
    initial: tuple[str, str],
) -> str:
    """The discussion template filled in (plain replacement, one pass), without the reminder.

    `initial` holds the leader's and the follower's initial reviews, in that order.
    """
    reviews = "\n\n".join(
        _block(f"{reviewer_label(k)}'s initial review", text) for k, text in enumerate(initial, 1)
    )
    values = {
        "question": render_question(question),
        "answer_a": render_answer(question, answer_a),
        "answer_b": render_answer(question, answer_b),
        "reviews": reviews,
    }
    # One pass over the template: answers and reviews may contain "{...}" text.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], templates.discussion).strip()


def render_messages(
    templates: Templates,
    question: Question,
    answer_a: Sequence[str],
    answer_b: Sequence[str],
    initial: tuple[str, str],
    history: Sequence[Spoken],
    position: int,
    note: str = "",
) -> tuple[str, tuple[Message, ...]]:
    """The system prompt and the chat messages of a turn for discussant `position`.

    `history` holds every readable turn so far, in order; `note` (a re-ask)
    goes at the very end of the last user message.
    """
    role = render_role(templates, position)
    parts: list[tuple[str, str]] = [
        ("user", render_opening(templates, question, answer_a, answer_b, initial))
    ]
    for n, spoken in enumerate(history, 1):
        if spoken.position == position:
            parts.append(("assistant", spoken.text.strip()))
            continue
        block = _block(f"{reviewer_label(spoken.position)}'s turn {n}", spoken.text)
        if parts[-1][0] == "user":
            parts[-1] = ("user", f"{parts[-1][1]}\n\n{block}")
        else:
            parts.append(("user", block))
    messages = [Message(r, f"{text}\n\n{role}" if r == "user" else text) for r, text in parts]
    last = messages[-1]
    messages[-1] = Message(last.role, last.content + note)
    return role, tuple(messages)
