"""The simulator: synthetic models with known true skill and reviewer biases.

It goes through exactly the code path of a real provider: it receives the
prompts the engine builds and returns text. Every answer carries a signature
(`⟦sim author=NAME q=QUALITY⟧`) so that sim reviewers can read back who wrote
an answer and how good it is. Real code must never rely on signatures.

Randomness is derived from hashes of (seed, model, prompt, attempt), so a run
gives the same results whatever the scheduling order, and a resumed run gives
the same results as an uninterrupted one.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.config import ModelConfig, ProviderConfig, SimParams, Tournament
from arena.providers._base import Provider
from arena.providers._sim_batcheval import is_batcheval_prompt, score_batch
from arena.providers._sim_discuss import discussion_turn, is_discussion_request
from arena.providers._sim_text import (
    UNREADABLE_REVIEW,
    asks_for_verdict,
    length_gap,
    review_sides,
)
from arena.review import VerdictScheme, verdict_scheme
from arena.types import (
    ErrorKind,
    GenerateRequest,
    GenerateResult,
    ProviderError,
    Usage,
    estimate_tokens,
)

__all__ = [
    "EXAMPLES_MARKER",
    "Draws",
    "SIGNATURE_RE",
    "SignedText",
    "SimProvider",
    "SimResponder",
    "answer_quality",
    "answer_words",
    "find_signatures",
    "rng_for",
    "register_sim_responder",
    "signature",
    "true_preference",
]

SIGNATURE_RE = re.compile(r"⟦sim author=(?P<author>[^ ⟧]+) q=(?P<q>-?[0-9.]+)⟧")

_SIG_PREFIX = "⟦sim author="
# How a review prompt with `examples:` items begins its examples block
# (arena.examples.render_examples); only `example_gain` reads it.
EXAMPLES_MARKER = "Examples judged by people"

_WORDS = (
    "the answer considers context evidence detail reason example step result "
    "because therefore however first second finally clearly notably overall "
    "approach method value case point idea source claim fact summary"
).split()


def answer_words(text: str, signed: Sequence[SignedText], author: str) -> int:
    """Words of `author`'s sim answers in `text` (the filler line before each signature)."""
    total = 0
    for s in signed:
        if s.author != author or s.start < 2:
            continue
        line = text[text.rfind("\n", 0, s.start - 1) + 1 : s.start - 1]
        if line.startswith("(") and ") " in line:
            total += len(line.split(") ", 1)[1].split())
    return total


def _relative_length_gap(
    text: str, signed: Sequence[SignedText], author_a: str, author_b: str
) -> float:
    """(L_A - L_B) / mean(L_A, L_B) in words; 0 when either length is unknown."""
    la = answer_words(text, signed, author_a)
    lb = answer_words(text, signed, author_b)
    if la <= 0 or lb <= 0:
        return 0.0
    return (la - lb) / ((la + lb) / 2.0)


def signature(author: str, quality: float) -> str:
    """The marker a sim answer carries so sim reviewers can read it back."""
    return f"⟦sim author={author} q={quality:.4f}⟧"


@dataclass(frozen=True)
class SignedText:
    """One signature found in a prompt."""

    author: str
    quality: float
    start: int


def find_signatures(text: str) -> list[SignedText]:
    """Every sim signature in a text, in order of appearance."""
    found: list[SignedText] = []
    start = text.find(_SIG_PREFIX)
    while start != -1:
        m = SIGNATURE_RE.match(text, start)
        if m is not None:
            found.append(SignedText(m.group("author"), float(m.group("q")), start))
        start = text.find(_SIG_PREFIX, start + 1)
    return found


class Draws:
    """Deterministic random numbers from a stable hash of some parts.

    Cheaper than seeding a `random.Random` per call, which matters when a
    benchmark pushes tens of thousands of calls through the simulator.
    """

    __slots__ = ("_key", "_n", "_spare")

    def __init__(self, *parts: object) -> None:
        self._key = "\x1f".join(map(str, parts)).encode()
        self._n = 0
        self._spare: float | None = None

    def random(self) -> float:
        """A uniform float in [0, 1)."""
        self._n += 1
        digest = hashlib.blake2b(self._key + self._n.to_bytes(4, "big"), digest_size=8).digest()
        return (int.from_bytes(digest, "big") >> 11) * _INV_2_53

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """A normal draw (Box-Muller)."""
        if self._spare is not None:
            z, self._spare = self._spare, None
        else:
            u1 = 1.0 - self.random()  # (0, 1]
            u2 = self.random()
            radius = math.sqrt(-2.0 * math.log(u1))
            z = radius * math.cos(2.0 * math.pi * u2)
            self._spare = radius * math.sin(2.0 * math.pi * u2)
        return mu + sigma * z

    def choice(self, items: Sequence[str]) -> str:
        """One item, uniformly."""
        return items[int(self.random() * len(items))]


_INV_2_53 = 1.0 / (1 << 53)


def rng_for(*parts: object) -> Draws:
    """Random draws seeded from a stable hash of the parts."""
    return Draws(*parts)


def answer_quality(seed: int, author: str, params: SimParams, question_text: str) -> float:
    """Latent quality of a model's answer to a question: skill plus per-question noise."""
    rng = rng_for(seed, "quality", author, question_text)
    return params.skill + params.answer_noise * rng.gauss(0.0, 1.0)


class SimResponder(Protocol):
    """A stage's calls in the simulator: the text of a call it recognises, else None.

    Given the run's seed, the model, its simulation parameters, the request, the
    call's key (a hash of model, system prompt and prompt) and the attempt (1
    for the first); its text should depend on nothing else, so that a resumed
    run gives the same results.
    """

    def __call__(
        self,
        seed: int,
        model: str,
        params: SimParams,
        request: GenerateRequest,
        key: str,
        attempt: int,
    ) -> str | None: ...


def _batcheval_responder(
    seed: int, model: str, params: SimParams, request: GenerateRequest, key: str, attempt: int
) -> str | None:
    last = request.messages[-1].content
    if not is_batcheval_prompt(last):
        return None
    return score_batch(seed, model, params, last, key, attempt)


def _discussion_responder(
    seed: int, model: str, params: SimParams, request: GenerateRequest, key: str, attempt: int
) -> str | None:
    if not is_discussion_request(request.messages):
        return None
    return discussion_turn(seed, model, params, request.system, request.messages, key, attempt)


# The stages' calls, asked in order before the answers and reviews: BatchEval and
# PeerDiscussion (the fake server answers them without loading the stages), then
# those of stages registered from their packages (`arena.stage.Part.sim`).
_RESPONDERS: list[SimResponder] = [_batcheval_responder, _discussion_responder]


def register_sim_responder(responder: SimResponder) -> None:
    """Let the simulator answer a stage's calls (`arena.stages` registers a part's `sim`)."""
    if responder not in _RESPONDERS:
        _RESPONDERS.append(responder)


def true_preference(qualities_a: list[float], qualities_b: list[float]) -> float:
    """Quality advantage of answer A over answer B (mean over turns)."""
    return sum(qualities_a) / len(qualities_a) - sum(qualities_b) / len(qualities_b)


class SimProvider(Provider):
    """The embedded default provider (`type: sim`)."""

    def __init__(
        self,
        name: str,
        config: ProviderConfig,
        models: Mapping[str, ModelConfig],
        seed: int,
    ) -> None:
        super().__init__(name, config, models, seed)
        # Attempt counters per (model, prompt): a retried call draws new luck,
        # while the n-th attempt of a call is the same in every run. Kept for
        # calls that failed (until they succeed) and for BatchEval and discussion
        # turns, whose text depends on the attempt.
        self._attempts: dict[str, int] = defaultdict(int)
        # The review template's declared verdict tokens (None: [[A]], [[B]], [[tie]]).
        self._scheme: VerdictScheme | None = None

    def bind(self, tournament: Tournament) -> None:
        """Learn the review template's verdict tokens: reviews answer with them."""
        self._scheme = verdict_scheme(tournament.config.review)

    def _marker(self, verdict: str, diff: float) -> str | None:
        """The token for a verdict (a tie without a tie token: the side `diff` leans to)."""
        if self._scheme is None:
            return f"[[{verdict}]]"
        token = self._scheme.token_for(verdict)
        if token is None and verdict == "tie":
            token = self._scheme.token_for("A" if diff >= 0 else "B")
        return token

    def _ally(self, author: str, style: str) -> int:
        """1 when `author` is a sim model of this provider with the `style` marker
        (the reviewer itself included: a bloc member favours every bloc answer)."""
        cfg = self.models.get(author)
        return int(cfg is not None and getattr(cfg.sim, "style", None) == style)

    def params(self, model: str) -> SimParams:
        """Simulation parameters of a provider-side model id."""
        cfg = self.models.get(model)
        if cfg is None:
            raise ProviderError(ErrorKind.PERMANENT, f"model '{model}' not found", status=404)
        return cfg.sim or SimParams()

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        """Answer, review or score, depending on what the prompt asks for."""
        params = self.params(request.model)
        prompt = "\n".join(m.content for m in request.messages)
        key = hashlib.blake2b(
            f"{request.model}\x1f{request.system or ''}\x1f{prompt}".encode(), digest_size=12
        ).hexdigest()
        self._attempts[key] += 1
        attempt = self._attempts[key]
        luck = rng_for(self.seed, "call", key, attempt)
        if params.latency_mean > 0 or params.latency_sd > 0:
            await asyncio.sleep(max(0.0, luck.gauss(params.latency_mean, params.latency_sd)))
        if params.failure_rate > 0 and luck.random() < params.failure_rate:
            raise ProviderError(ErrorKind.TRANSIENT, "simulated transient server error", status=503)
        text = self.respond(request, params, prompt, key)
        usage = Usage(
            input_tokens=estimate_tokens(request.prompt_chars()),
            output_tokens=estimate_tokens(len(text)),
        )
        return GenerateResult(text=text, usage=usage)

    def respond(self, request: GenerateRequest, params: SimParams, prompt: str, key: str) -> str:
        """The text of a response; the mode is read from the prompt itself. A stage's
        call is answered by the first responder that recognises it (`_RESPONDERS`);
        an answer or a review forgets the call's attempt counter (see `__init__`)."""
        last = request.messages[-1].content
        for responder in _RESPONDERS:
            text = responder(self.seed, request.model, params, request, key, self._attempts[key])
            if text is not None:
                return text
        # Answers and reviews depend on the prompt alone: once this attempt got
        # through its counter is not needed (asked again, the call draws its first
        # attempt's luck, as in a new run). Dropping it keeps a million-call run's
        # memory flat.
        del self._attempts[key]
        signed = find_signatures(last)
        authors = list(dict.fromkeys(s.author for s in signed))
        if len(authors) >= 2:
            return self.review(request.model, params, last, signed, authors, key)
        return self.unsigned_review(request, params, last, key) or self.answer(request, params)

    def unsigned_review(
        self, request: GenerateRequest, params: SimParams, prompt: str, key: str
    ) -> str | None:
        """A review of answers not both written by the simulator (arena/providers/_sim_text.py);
        None when the prompt is not a review."""
        sides = review_sides(
            prompt, self.seed, lambda text: [(s.author, s.quality) for s in find_signatures(text)]
        )
        if sides is None:
            return self.unreadable(prompt)
        (author_a, qa, words_a), (author_b, qb, words_b) = sides
        signed = [SignedText(author_a, q, 0) for q in qa] + [SignedText(author_b, q, 1) for q in qb]
        return self.review(
            request.model,
            params,
            prompt,
            signed,
            [author_a, author_b],
            key,
            gap=length_gap(words_a, words_b),
        )

    def unreadable(self, prompt: str) -> str | None:
        """A tie for a review prompt whose answers cannot be found; None: not a review."""
        if self._scheme is None:
            return UNREADABLE_REVIEW if asks_for_verdict(prompt) else None
        a, b = self._scheme.token_for("A"), self._scheme.token_for("B")
        if a is None or b is None or not asks_for_verdict(prompt, (a, b)):
            return None
        tie = self._scheme.token_for("tie")
        return UNREADABLE_REVIEW.replace("[[tie]]", tie or "(no verdict)")

    def answer(self, request: GenerateRequest, params: SimParams) -> str:
        """A contestant's answer: filler prose in the model's style plus its signature."""
        first_turn = next(m.content for m in request.messages if m.role == "user")
        quality = answer_quality(self.seed, request.model, params, first_turn)
        turn = sum(1 for m in request.messages if m.role == "user")
        rng = rng_for(self.seed, "words", request.model, first_turn, turn)
        style = params.style or request.model
        count = params.answer_words
        if params.answer_words_spread > 0:
            spread = rng_for(self.seed, "verbosity", request.model, first_turn, turn)
            count = max(1, round(count * math.exp(params.answer_words_spread * spread.gauss())))
        words = " ".join(rng.choice(_WORDS) for _ in range(count))
        return f"({style}) {words.capitalize()}.\n{signature(request.model, quality)}"

    def review(
        self,
        reviewer: str,
        params: SimParams,
        prompt: str,
        signed: list[SignedText],
        authors: list[str],
        key: str,
        gap: float | None = None,
    ) -> str:
        """A pairwise review: prefers the better answer, with noise and biases.

        `gap`: the answers' relative length difference, when known from their
        texts (file answers); else read from the sim answers' filler.
        """
        author_a, author_b = authors[0], authors[1]
        qa = [s.quality for s in signed if s.author == author_a]
        qb = [s.quality for s in signed if s.author == author_b]
        rng = rng_for(self.seed, "review", key)
        diff = true_preference(qa, qb) + params.position_bias
        if params.length_bias:
            if gap is None:
                gap = _relative_length_gap(prompt, signed, author_a, author_b)
            diff += params.length_bias * gap
        if author_a == reviewer:
            diff += params.self_preference
        elif author_b == reviewer:
            diff -= params.self_preference
        if params.ally_preference and params.style is not None:
            diff += params.ally_preference * (
                self._ally(author_a, params.style) - self._ally(author_b, params.style)
            )
        noise = params.judge_noise
        if params.example_gain > 0 and EXAMPLES_MARKER in prompt:
            noise /= 1.0 + params.example_gain  # the knob: examples sharpen the reviewer
        diff += noise * rng.gauss(0.0, 1.0)
        if rng.random() < params.malformed_rate:
            return "Both answers have merits and weaknesses; it is hard to say."
        if abs(diff) < params.tie_band:
            verdict, reason = "tie", "The two answers are about equally good."
        elif diff > 0:
            verdict, reason = "A", "Assistant A is better supported and more complete."
        else:
            verdict, reason = "B", "Assistant B is better supported and more complete."
        marker = self._marker(verdict, diff)
        return f"{reason}\nVerdict: {marker}"
