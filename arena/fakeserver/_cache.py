"""The fake server's prompt cache: each provider's rules for reusing a prompt prefix.

A prompt is a sequence of text segments (its system text and messages, in
order; a segment may end in a cache breakpoint). Tokens are counted as the
simulator counts them, four characters a token. The cache keeps digests of
prefixes per scope (API, key and model) until their time to live runs out;
a hit renews it.

- OpenAI (automatic): prompts of at least 1,024 tokens; the cached part is
  the longest cached prefix in steps of 128 tokens (from 1,024 on); every
  such prefix of the prompt is stored. Writes cost nothing extra.
- Anthropic (explicit): only prefixes that end at a `cache_control`
  breakpoint are stored; a request reads the longest stored prefix ending at
  one of its block boundaries (up to 20 blocks before a breakpoint) and
  writes the tokens from there to its last breakpoint.
- Gemini (implicit): as OpenAI's rules (the fake's choice of step: 128 tokens).

The shortest cached prefix depends on the model, as the providers' caching
docs list it (checked 2026-12): 1,024 tokens for every OpenAI model; for
Anthropic, 4,096 for Claude Opus 4.5 and 4.6 and Haiku 4.5, 2,048 for Sonnet
4.6 and the Haiku 3 models, 1,024 for the others (Sonnet 4.5, Opus 4.1, Opus
4, Sonnet 4); for Gemini, 2,048 for the 2.5 models (the docs list Flash and
Pro; the fake gives Flash-Lite the same) and 4,096 for later ones
(`min_tokens_for`). A prefix shorter than its model's minimum is neither
read nor written: the request pays full price, as a real one does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

# Characters per token, as the simulator counts them (arena.types.estimate_tokens).
CHARS_PER_TOKEN = 4
# Anthropic looks this many block boundaries back from a breakpoint for a hit.
LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class CacheRules:
    """How one API caches prompt prefixes."""

    min_tokens: int  # shortest prefix that is cached
    step_tokens: int  # automatic caching: prefixes in steps of this many tokens
    explicit: bool  # only prefixes ending at a breakpoint are stored (Anthropic)


# (API, model id fragment, minimum): the first fragment found in the model id wins;
# a model matching none takes its API's minimum in RULES.
_MODEL_MINIMUMS: tuple[tuple[str, str, int], ...] = (
    ("anthropic", "opus-4-6", 4096),
    ("anthropic", "opus-4-5", 4096),
    ("anthropic", "haiku-4-5", 4096),
    ("anthropic", "sonnet-4-6", 2048),
    ("anthropic", "3-5-haiku", 2048),
    ("anthropic", "3-haiku", 2048),
    ("gemini", "gemini-2.5", 2048),
    ("gemini", "gemini-3", 4096),
)

RULES: dict[str, CacheRules] = {
    "openai": CacheRules(min_tokens=1024, step_tokens=128, explicit=False),
    "anthropic": CacheRules(min_tokens=1024, step_tokens=0, explicit=True),
    "gemini": CacheRules(min_tokens=1024, step_tokens=128, explicit=False),
}


def min_tokens_for(api: str, model: str) -> int:
    """The shortest prefix `model` caches on `api` (the provider's documented minimum)."""
    name = model.lower()
    for dialect, fragment, minimum in _MODEL_MINIMUMS:
        if dialect == api and fragment in name:
            return minimum
    return RULES[api].min_tokens


def rules_for(api: str, model: str) -> CacheRules:
    """`api`'s caching rules with `model`'s own minimum prefix length."""
    base = RULES[api]
    minimum = min_tokens_for(api, model)
    return base if minimum == base.min_tokens else replace(base, min_tokens=minimum)


Segment = tuple[str, bool]  # (text, a cache breakpoint after it)


@dataclass(frozen=True)
class CacheUse:
    """What one request read from and wrote to the cache, in tokens."""

    read: int
    written: int


class PrefixCache:
    """Prefix digests per scope with a time to live; `clock` gives seconds."""

    def __init__(self, ttl_seconds: float, clock: Callable[[], float]) -> None:
        self.ttl = ttl_seconds
        self.clock = clock
        self._expiry: dict[bytes, float] = {}

    def clear(self) -> None:
        """Forget every entry."""
        self._expiry.clear()

    def use(
        self,
        rules: CacheRules,
        scope: str,
        segments: Sequence[Segment],
        at: float | None = None,
    ) -> CacheUse:
        """Look the prompt up and store its prefixes; the tokens read and written.

        `at`: when the request is served (default: the clock now), for a batch
        line done at its own moment of the job's spread.
        """
        now = self.clock() if at is None else at
        text = "".join(t for t, _ in segments)
        if rules.explicit:
            ends: list[int] = []
            marks: list[int] = []
            at = 0
            for t, marked in segments:
                at += len(t)
                ends.append(at)
                if marked:
                    marks.append(len(ends) - 1)
            candidates = sorted(
                {ends[j] for i in marks for j in range(max(0, i - LOOKBACK_BLOCKS), i + 1)}
            )
            stored = [ends[i] for i in marks]
        else:
            step = rules.step_tokens * CHARS_PER_TOKEN
            first = rules.min_tokens * CHARS_PER_TOKEN
            candidates = list(range(first, len(text) + 1, step)) if step else []
            stored = candidates
        floor = rules.min_tokens * CHARS_PER_TOKEN
        digests = _prefix_digests(scope, text, sorted(set(candidates) | set(stored)))
        hit = 0
        for offset in candidates:
            if offset < floor:
                continue
            expiry = self._expiry.get(digests[offset])
            if expiry is not None and expiry > now:
                hit = max(hit, offset)
        for offset in stored:
            if offset >= floor:
                self._expiry[digests[offset]] = now + self.ttl
        if hit:
            self._expiry[digests[hit]] = now + self.ttl  # a hit renews its entry
        written = 0
        if rules.explicit and stored and stored[-1] >= floor and stored[-1] > hit:
            written = (stored[-1] - hit) // CHARS_PER_TOKEN
        return CacheUse(read=hit // CHARS_PER_TOKEN, written=written)


def _prefix_digests(scope: str, text: str, offsets: Sequence[int]) -> dict[int, bytes]:
    """Digests of `text[:offset]` for each offset (ascending), hashing the text once."""
    h = hashlib.blake2b(scope.encode() + b"\x1f", digest_size=16)
    out: dict[int, bytes] = {}
    at = 0
    for offset in offsets:
        h.update(text[at:offset].encode())
        at = offset
        out[offset] = h.copy().digest()
    return out
