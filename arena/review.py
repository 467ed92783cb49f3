"""Review prompts: rendering battles into the template, reading verdicts back."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.config import (
    GENERAL_VARIANT,
    Question,
    ReviewConfig,
    declared_verdicts,
    template_variants,
)
from arena.types import Verdict

__all__ = [
    "ParsedReview",
    "VerdictScheme",
    "parse_review",
    "parse_verdict",
    "verdict_scheme",
    "render_answer",
    "render_question",
    "render_reference",
    "render_review_prompt",
    "render_review_with_breaks",
    "with_examples",
    "review_cache_key",
    "select_variant",
    "template_variants",
    "uses_reference",
]

_VERDICT_RE = re.compile(r"\[\[\s*(A|B|tie)\s*\]\]", re.IGNORECASE)


def render_question(question: Question) -> str:
    """The question as shown to reviewers: one turn plain, several turns numbered."""
    if len(question.turns) == 1:
        return question.turns[0]
    return "\n\n".join(f"Turn {i}: {t}" for i, t in enumerate(question.turns, 1))


def render_answer(question: Question, answer_turns: Sequence[str]) -> str:
    """An answer as shown to reviewers: the whole conversation when multi-turn."""
    if len(question.turns) == 1:
        return answer_turns[0]
    parts = []
    for i, (q, a) in enumerate(zip(question.turns, answer_turns, strict=True), 1):
        parts.append(f"[Turn {i}]\nUser: {q}\nAssistant: {a}")
    return "\n\n".join(parts)


def render_reference(question: Question) -> str:
    """The question's reference answer as shown to reviewers; empty when it has none.

    One turn plain; several turns as `[Turn N]` blocks, like the answers.
    """
    ref = question.reference
    if not ref:
        return ""
    if len(ref) == 1:
        return ref[0]
    return "\n\n".join(f"[Turn {i}]\n{text}" for i, text in enumerate(ref, 1))


# arena's placeholders; arena-hard's judge prompt writes them in capitals.
_PLACEHOLDER_RE = re.compile(
    r"\{(question|answer_a|answer_b|reference|examples|QUESTION|ANSWER_A|ANSWER_B|REFERENCE)\}"
)


def with_examples(template: str, examples: str) -> str:
    """A template that shows `examples` (the `examples:` section's block).

    A template with `{examples}` keeps it (filled at rendering); a shipped
    template without it gets the block before its text. Without examples the
    template is returned unchanged, so prompts stay byte-identical.
    """
    if not examples or "{examples}" in template:
        return template
    return "{examples}\n\n" + template


# A template may hold variants chosen by the question's category, each
# introduced by a line `{variant: NAME}` (or `{variant: NAME, OTHER}`); the
# `general` variant serves every other category and questions without one.
def select_variant(template: str, category: str | None) -> str:
    """The template a question of `category` is reviewed with (a plain template: itself)."""
    variants = template_variants(template)
    if variants is None:
        return template
    key = (category or "").strip().lower()
    return variants.get(key, variants[GENERAL_VARIANT])


def uses_reference(template: str) -> bool:
    """Whether a review template shows the reference answer."""
    return "{reference}" in template or "{REFERENCE}" in template


def render_review_prompt(
    template: str,
    question: Question,
    answer_a: Sequence[str],
    answer_b: Sequence[str],
    examples: str = "",
) -> str:
    """Fill the review template in one pass: text inside answers is never substituted.

    `{reference}` becomes the question's reference answer (empty when it has none),
    `{examples}` the examples block (empty without `examples:`; see `with_examples`).
    A template with `{variant: ...}` lines is first cut to the question's variant.
    """
    template = with_examples(select_variant(template, question.category), examples)
    values = {
        "question": render_question(question),
        "answer_a": render_answer(question, answer_a),
        "answer_b": render_answer(question, answer_b),
        "reference": render_reference(question),
        "examples": examples,
    }
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1).lower()], template)


def render_review_with_breaks(
    template: str, question: Question, answer_a: Sequence[str], answer_b: Sequence[str]
) -> tuple[str, tuple[int, ...]]:
    """The review prompt (as `render_review_prompt`) and its cache breaks.

    The breaks are the offsets right after each filled placeholder that comes
    before `{answer_b}` (the question, the reference, answer A): the prefixes
    up to them are shared by other reviews of the same question (and of the
    same first answer), so a provider may cache them (`GenerateRequest.cache_breaks`).
    """
    template = select_variant(template, question.category)
    values = {
        "question": render_question(question),
        "answer_a": render_answer(question, answer_a),
        "answer_b": render_answer(question, answer_b),
        "reference": render_reference(question),
        "examples": "",
    }
    pieces: list[str] = []
    breaks: list[int] = []
    at = 0
    length = 0
    seen_b = False
    for m in _PLACEHOLDER_RE.finditer(template):
        pieces.append(template[at : m.start()])
        length += m.start() - at
        value = values[m.group(1).lower()]
        pieces.append(value)
        length += len(value)
        at = m.end()
        seen_b = seen_b or m.group(1).lower() == "answer_b"
        if not seen_b:
            breaks.append(length)
    pieces.append(template[at:])
    return "".join(pieces), tuple(breaks)


def review_cache_key(question_id: str) -> str:
    """A prompt cache key shared by the reviews of one question (OpenAI `prompt_cache_key`)."""
    return "arena-" + hashlib.sha256(question_id.encode()).hexdigest()[:24]


def parse_verdict(text: str) -> Verdict:
    """The last [[A]] / [[B]] / [[tie]] marker in a review; INVALID when there is none."""
    matches = _VERDICT_RE.findall(text)
    if not matches:
        return Verdict.INVALID
    last = matches[-1].lower()
    if last == "a":
        return Verdict.A
    if last == "b":
        return Verdict.B
    return Verdict.TIE


@dataclass(frozen=True)
class ParsedReview:
    """What a review's text says: the plain verdict and, when graded, `p_a` and `weight`.

    `p_a` is None when the verdict's own share says it (1, 0.5, 0 for A, tie,
    B) and `weight` None when it is 1: such a review ranks exactly as a plain one.
    """

    verdict: Verdict
    p_a: float | None = None
    weight: float | None = None


def _plain(p_a: float) -> Verdict:
    return Verdict.A if p_a > 0.5 else Verdict.B if p_a < 0.5 else Verdict.TIE


_PLAIN_SHARE = {Verdict.A: 1.0, Verdict.TIE: 0.5, Verdict.B: 0.0}


class VerdictScheme:
    """A template's declared verdict tokens (`review.verdicts`): token -> (p_a, weight).

    A review's verdict is its last declared token (exact text, longest token
    first where two start at the same place); none: invalid.
    """

    def __init__(self, tokens: Mapping[str, tuple[float, float]]) -> None:
        self.tokens = dict(tokens)
        ordered = sorted(self.tokens, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(t) for t in ordered))

    def parse(self, text: str) -> ParsedReview:
        """The last declared token in `text`, as a verdict with its share and weight."""
        last = None
        for last in self._pattern.finditer(text):  # noqa: B007 - the last match is wanted
            pass
        if last is None:
            return ParsedReview(Verdict.INVALID)
        p_a, weight = self.tokens[last.group(0)]
        verdict = _plain(p_a)
        return ParsedReview(
            verdict,
            None if p_a == _PLAIN_SHARE[verdict] else p_a,
            None if weight == 1.0 else weight,
        )

    def token_for(self, verdict: str, *, strong: bool = False) -> str | None:
        """The token that says a plain verdict (`A`, `B`, `tie`); None when none does.

        Of the tokens on that side, the one nearest a full win (a full tie),
        the heaviest when `strong`, else the lightest; ties by declaration order.
        """
        target = {"A": 1.0, "B": 0.0, "tie": 0.5}[verdict]
        side = [
            (abs(p_a - target), -weight if strong else weight, k, token)
            for k, (token, (p_a, weight)) in enumerate(self.tokens.items())
            if _plain(p_a).value == verdict
        ]
        return min(side)[3] if side else None


def parse_review(text: str, scheme: VerdictScheme | None = None) -> ParsedReview:
    """A review's verdict: by the declared tokens, else the default `[[A]]`/`[[B]]`/`[[tie]]`."""
    if scheme is None:
        return ParsedReview(parse_verdict(text))
    return scheme.parse(text)


def verdict_scheme(review: ReviewConfig) -> VerdictScheme | None:
    """The declared verdict tokens of a tournament's `review:` section (None: the default)."""
    declared = declared_verdicts(review.verdicts)
    return None if declared is None else VerdictScheme(declared)
