"""The simulator as a discussant in a PeerDiscussion (see docs/discussion.md).

A sim discussant reads a turn's chat like a model would: the system prompt and
the role reminder (`You are Reviewer N`) say which reviewer it is; the first
user message holds the two answers (and the latent quality their sim
signatures carry, or for answers read from a file the quality a sim reviewer
gives their text) and both initial reviews; its own earlier turns are the
`assistant` messages, the other reviewer's are the `[The start of Reviewer N's
turn K]` blocks of the later user messages. Each of its turns carries its own
signature, `⟦sim reviewer=NAME skill=S⟧`, so the other sim discussant can tell
how strong a reviewer it is arguing with.

A turn: the leader opens by defending its initial review. Later, a discussant
that disagrees with the other's latest preference takes a fresh look at the
answers with both reviews and the arguments before it, and sees the quality
gap of A over B as

    seen = true gap + self + judge_noise / (1 + insight) * e

where `self` is `+self_preference` when the discussant wrote answer A and
`-self_preference` when it wrote answer B (a discussant judging its own
answer keeps its bias, as a reviewer does), else 0. The fresh look has no
position bias and less noise than a review: a gain the simulator builds in.
With `fresh_look: false` it has neither advantage: position bias is added and
the noise is the reviews' `judge_noise`. It adopts the other's preference with
probability

    (1 - stubbornness) * sigmoid(skill_other - skill_own + 4 * (m_other - m_own))

where `m` is how much `seen` supports a preference (`seen` for A, `-seen` for
B, 0 for a tie). So a discussant is more easily persuaded by a stronger
reviewer and toward the answer it sees as better, and holds its opinion
otherwise. With probability `malformed_rate` the turn has no preference line.

The chat format is the interface: this module must not import
`arena.providers.sim` (which imports it) nor `arena.discuss` (a later layer);
tests check that the messages arena.discuss renders are read correctly here.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Sequence

from arena.config import SimParams
from arena.providers._sim_text import review_sides
from arena.types import Message

__all__ = ["discussion_turn", "is_discussion_prompt", "is_discussion_request"]

_REVIEW_MARKERS = (
    "[The start of Reviewer 1's initial review]",
    "[The start of Reviewer 2's initial review]",
)
_INITIAL_RE = re.compile(
    r"\[The start of Reviewer ([12])'s initial review\]\n(.*?)\n"
    r"\[The end of Reviewer \1's initial review\]",
    re.S,
)
_TURN_RE = re.compile(
    r"\[The start of Reviewer ([12])'s turn (\d+)\]\n(.*?)\n"
    r"\[The end of Reviewer \1's turn \2\]",
    re.S,
)
_ROLE_RE = re.compile(r"You are Reviewer ([12])\b")
_PREFERENCE_RE = re.compile(r"\[\[\s*(A|B|tie)\s*\]\]", re.I)
_ANSWER_SIG_RE = re.compile(r"⟦sim author=(?P<author>[^ ⟧]+) q=(?P<q>-?[0-9.]+)⟧")
_REVIEWER_SIG_RE = re.compile(r"⟦sim reviewer=(?P<name>[^ ⟧]+) skill=(?P<skill>-?[0-9.]+)⟧")
# How much one unit of skill difference, and one unit of quality by which the
# fresh look favours the other's preference, move the log-odds of being persuaded.
_SKILL_WEIGHT = 1.0
_MERIT_WEIGHT = 4.0

_HOLD = (
    "I have weighed the other review's points, but on unsupported information and "
    "core content my assessment stands.",
    "The objections do not change the comparison on the most important aspects.",
)
_CHANGE = (
    "The other reviewer's points on unsupported claims and core information are "
    "convincing; I revise my preference.",
    "On reflection the other review weighs the key aspects better; I change my view.",
)
_OPEN = "As the first to speak, I restate my assessment of the two answers."


def is_discussion_prompt(prompt: str) -> bool:
    """Whether a prompt is a discussion's opening (both initial-review blocks)."""
    return all(marker in prompt for marker in _REVIEW_MARKERS)


def is_discussion_request(messages: Sequence[Message]) -> bool:
    """Whether a chat is a turn of a PeerDiscussion: its first message is the opening."""
    return bool(messages) and is_discussion_prompt(messages[0].content)


def _rng(*parts: object) -> random.Random:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _preference(text: str) -> str | None:
    found = _PREFERENCE_RE.findall(text)
    if not found:
        return None
    last = found[-1].lower()
    return "tie" if last == "tie" else last.upper()


def _answers(seed: int, answers: str) -> tuple[float, str | None, str | None]:
    """Quality of answer A minus answer B and their authors.

    From the sim signatures; answers without them (read from a file) get the
    quality a sim reviewer gives their text (`arena.providers._sim_text`), so
    a discussion judges them as the reviews did. (0, None, None) when the two
    answers cannot be found.
    """
    quality: dict[str, list[float]] = {}
    for m in _ANSWER_SIG_RE.finditer(answers):
        quality.setdefault(m.group("author"), []).append(float(m.group("q")))
    if len(quality) >= 2:
        (author_a, first), (author_b, second) = list(quality.items())[:2]
        return sum(first) / len(first) - sum(second) / len(second), author_a, author_b
    sides = review_sides(answers, seed, lambda text: [])
    if sides is None:
        return 0.0, None, None
    (_, qa, _), (_, qb, _) = sides
    return sum(qa) / len(qa) - sum(qb) / len(qb), None, None


def _merit(preference: str | None, seen: float) -> float:
    return {"A": seen, "B": -seen}.get(preference or "tie", 0.0)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def discussion_turn(
    seed: int,
    model: str,
    params: SimParams,
    system: str | None,
    messages: Sequence[Message],
    key: str,
    attempt: int,
) -> str:
    """A sim discussant's reply to one turn of a discussion (the chat so far)."""
    rng = _rng(seed, "discuss", model, key, attempt)
    roles = _ROLE_RE.findall(system or "") or _ROLE_RE.findall(messages[-1].content)
    own = int(roles[-1]) if roles else 1
    other = 3 - own
    opening = messages[0].content
    latest: dict[int, str | None] = {1: None, 2: None}
    for who, body in _INITIAL_RE.findall(opening):
        latest[int(who)] = _preference(body)
    other_skill: float | None = None
    turns = 0
    for message in messages:
        if message.role == "assistant":
            latest[own] = _preference(message.content)
            turns += 1
            continue
        for who, _n, body in _TURN_RE.findall(message.content):
            turns += 1
            latest[int(who)] = _preference(body)
            if int(who) == other:
                sig = _REVIEWER_SIG_RE.search(body)
                other_skill = float(sig.group("skill")) if sig else None
    gap, author_a, author_b = _answers(seed, opening.split(_REVIEW_MARKERS[0])[0])
    if author_a == model:
        gap += params.self_preference
    elif author_b == model:
        gap -= params.self_preference
    if params.fresh_look:
        noise = params.judge_noise / (1.0 + params.insight)
    else:
        noise = params.judge_noise
        gap += params.position_bias
    seen = gap + noise * rng.gauss(0.0, 1.0)
    mine, theirs = latest[own], latest[other]
    if mine is None:  # no readable initial preference: judge afresh
        mine = "tie" if abs(seen) < params.tie_band else ("A" if seen > 0 else "B")
    if not turns:
        choice, reason = mine, _OPEN
    elif theirs is None or theirs == mine:
        choice, reason = mine, rng.choice(_HOLD)
    else:
        skill_gap = 0.0 if other_skill is None else other_skill - params.skill
        z = _SKILL_WEIGHT * skill_gap + _MERIT_WEIGHT * (_merit(theirs, seen) - _merit(mine, seen))
        if rng.random() < (1.0 - params.stubbornness) * _sigmoid(z):
            choice, reason = theirs, rng.choice(_CHANGE)
        else:
            choice, reason = mine, rng.choice(_HOLD)
    text = f"{reason}\n⟦sim reviewer={model} skill={params.skill:.4f}⟧"
    if rng.random() < params.malformed_rate:
        return text
    return f"{text}\nPreference: [[{choice}]]"
