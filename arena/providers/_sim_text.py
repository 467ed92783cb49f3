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
for signed answers, `length_bias` with each answer's real length: the words
of its text as the prompt shows it (a sim answer's signature left out). A
prompt that asks for a `[[A]]`/`[[B]]` verdict but whose answers cannot be
found gets a tie, never an unreadable review.

Such a verdict is a placeholder, not a judgment of quality: the quality of a
text is a hash of it, so which of two real answers wins says nothing about
them (only `length_bias` reads anything real, their lengths). It lets a
tournament over answer files be rehearsed end to end with no key.

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
Side = tuple[str, list[float], int]  # (author, qualities of its turns, words of its text)
# A sim signature (`⟦sim author=... q=...⟧`): no part of an answer's length.
_SIGNATURE_RE = re.compile(r"⟦[^⟧]*⟧")

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
    body = region.strip(" \t\r\n[]<>|")
    words = len(_SIGNATURE_RE.sub(" ", body).split())
    found = list(signed(region))
    if found:
        author = found[0][0]
        return author, [q for a, q in found if a == author], words
    label = hashlib.blake2b(" ".join(body.split()).encode(), digest_size=4).hexdigest()
    return f"text#{label}", [text_quality(seed, body)], words


def length_gap(words_a: int, words_b: int) -> float:
    """(L_A - L_B) / mean(L_A, L_B) in words; 0 when either is empty."""
    if words_a <= 0 or words_b <= 0:
        return 0.0
    return (words_a - words_b) / ((words_a + words_b) / 2.0)


def review_sides(prompt: str, seed: int, signed: SignatureFinder) -> tuple[Side, Side] | None:
    """(author, qualities, words) of answers A and B of a review prompt (see the module)."""
    regions = answer_regions(prompt)
    if regions is None:
        return None
    return _side(seed, regions[0], signed), _side(seed, regions[1], signed)


def asks_for_verdict(prompt: str, tokens: tuple[str, str] = ("[[A]]", "[[B]]")) -> bool:
    """Whether a prompt asks for a pairwise verdict (a review prompt): it shows both tokens."""
    return tokens[0] in prompt and tokens[1] in prompt
