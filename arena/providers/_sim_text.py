"""Sim reviews of answers the simulator did not write (a contestant's answers from a file).

A sim answer carries a signature with its author and latent quality; an
answer read from a file has none. A sim reviewer then finds each answer in
the review prompt by the markers the default template (and MT-bench's and
arena-hard's judge prompts) put around it, `The start of Assistant A's
answer` ... `The end of Assistant A's answer` (any case, any brackets), and
judges an unsigned answer by a quality derived from its text: a normal draw
with mean 0 and spread TEXT_QUALITY_SD (an average sim model: skill 0,
answer_noise 0.5), seeded by the seed and a hash of the text with its
whitespace collapsed. The same text always has the same quality, for every
sim reviewer and in both positions; the reviewer's noise and biases apply as
for signed answers. A prompt that asks for a `[[A]]`/`[[B]]` verdict but
whose answers cannot be found gets a tie, never an unreadable review.

This module must not import `arena.providers.sim` (which imports it).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence

TEXT_QUALITY_SD = 0.5

_REGION_RE = re.compile(
    r"the start of assistant (?P<side>[ab])'s answer(?P<body>.*?)"
    r"the end of assistant (?P=side)'s answer",
    re.IGNORECASE | re.DOTALL,
)

SignatureFinder = Callable[[str], Sequence[tuple[str, float]]]  # text -> (author, quality)...
Side = tuple[str, list[float]]  # (author, qualities of its turns)

UNREADABLE_REVIEW = "The two answers cannot be told apart in this prompt.\nVerdict: [[tie]]"


def answer_regions(prompt: str) -> tuple[str, str] | None:
    """The text of answer A and answer B of a review prompt, or None when not marked."""
    found: dict[str, str] = {}
    for m in _REGION_RE.finditer(prompt):
        found.setdefault(m.group("side").upper(), m.group("body"))
    if "A" in found and "B" in found:
        return found["A"], found["B"]
    return None


def text_quality(seed: int, text: str) -> float:
    """The latent quality a sim reviewer gives an unsigned answer (see the module docstring)."""
    normalized = " ".join(text.split()).encode()
    digest = hashlib.blake2b(f"{seed}\x1ftext-quality\x1f".encode() + normalized, digest_size=16)
    raw = digest.digest()
    # Two uniforms in (0, 1] and [0, 1) from the hash, then Box-Muller.
    u1 = (int.from_bytes(raw[:8], "big") + 1) / 2.0**64
    u2 = int.from_bytes(raw[8:], "big") / 2.0**64
    return TEXT_QUALITY_SD * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def _side(seed: int, region: str, signed: SignatureFinder) -> Side:
    found = list(signed(region))
    if found:
        author = found[0][0]
        return author, [q for a, q in found if a == author]
    body = region.strip(" \t\r\n[]<>|")
    label = hashlib.blake2b(" ".join(body.split()).encode(), digest_size=4).hexdigest()
    return f"text#{label}", [text_quality(seed, body)]


def review_sides(prompt: str, seed: int, signed: SignatureFinder) -> tuple[Side, Side] | None:
    """(author, qualities) of answers A and B of a review prompt, unsigned ones from their text."""
    regions = answer_regions(prompt)
    if regions is None:
        return None
    return _side(seed, regions[0], signed), _side(seed, regions[1], signed)


def asks_for_verdict(prompt: str) -> bool:
    """Whether a prompt asks for a pairwise verdict (a review prompt)."""
    return "[[A]]" in prompt and "[[B]]" in prompt
