"""Review prompt rendering and verdict parsing."""

from __future__ import annotations

import pytest

from arena.config import Question
from arena.review import parse_verdict, render_review_prompt
from arena.types import Verdict


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("A is better.\nVerdict: [[A]]", Verdict.A),
        ("Verdict: [[b]]", Verdict.B),
        ("equal\nVerdict: [[ tie ]]", Verdict.TIE),
        ("Earlier I thought [[A]] but on reflection\nVerdict: [[B]]", Verdict.B),
        ("I prefer A.", Verdict.INVALID),
        ("Verdict: A", Verdict.INVALID),
        ("", Verdict.INVALID),
    ],
)
def test_parse_verdict(text: str, verdict: Verdict) -> None:
    assert parse_verdict(text) is verdict


def test_multi_turn_prompt_shows_whole_conversation() -> None:
    q = Question("1", ("first?", "second?"))
    prompt = render_review_prompt(
        "{question}|{answer_a}|{answer_b}", q, ["a1", "a2"], ["b1 {x}", "b2"]
    )
    question, a, b = prompt.split("|")
    assert "Turn 1: first?" in question and "Turn 2: second?" in question
    assert "User: second?\nAssistant: a2" in a
    assert "b1 {x}" in b  # braces in answers are kept verbatim


def test_placeholders_inside_answers_are_not_substituted() -> None:
    q = Question("1", ("Explain {answer_b} templates",))
    prompt = render_review_prompt(
        "Q: {question}\nA: {answer_a}\nB: {answer_b}",
        q,
        ["I mention {answer_b} and {question}"],
        ["second"],
    )
    assert prompt == (
        "Q: Explain {answer_b} templates\nA: I mention {answer_b} and {question}\nB: second"
    )


def test_reference_placeholder_shows_the_reference_or_nothing() -> None:
    template = "Q: {question}\nRef: {reference}\nA: {answer_a}\nB: {answer_b}"
    with_ref = Question("1", ("2+2?",), category="math", reference=("4",))
    assert "Ref: 4\n" in render_review_prompt(template, with_ref, ["4"], ["5"])
    without = Question("2", ("Hi?",))
    assert "Ref: \nA:" in render_review_prompt(template, without, ["a"], ["b"])
    two = Question("3", ("x?", "y?"), reference=("rx", "ry"))
    shown = render_review_prompt(template, two, ["a1", "a2"], ["b1", "b2"])
    assert "[Turn 1]\nrx\n\n[Turn 2]\nry" in shown
    # A reference inside an answer is kept verbatim, never substituted.
    assert "{reference}" in render_review_prompt(template, with_ref, ["{reference}"], ["b"])


def test_breaks_split_the_prompt_after_the_shared_parts() -> None:
    from arena.config import DEFAULT_REVIEW_TEMPLATE, REVIEW_TEMPLATES
    from arena.review import render_review_with_breaks

    q = Question("1", ("What is a prefix?",))
    for path in (DEFAULT_REVIEW_TEMPLATE, REVIEW_TEMPLATES["cache_friendly"]):
        template = path.read_text(encoding="utf-8")
        prompt, breaks = render_review_with_breaks(template, q, ["answer x"], ["answer y"])
        assert prompt == render_review_prompt(template, q, ["answer x"], ["answer y"])
        assert len(breaks) == 2
        other, other_breaks = render_review_with_breaks(template, q, ["answer x"], ["answer z"])
        assert other_breaks == breaks
        # Same first answer: shared up to the second break; another first answer: the first.
        assert (
            other[: breaks[1]] == prompt[: breaks[1]] and other[breaks[1] :] != prompt[breaks[1] :]
        )
        swapped, _ = render_review_with_breaks(template, q, ["answer y"], ["answer x"])
        assert swapped[: breaks[0]] == prompt[: breaks[0]]
        assert prompt[: breaks[0]].endswith("What is a prefix?")
        assert prompt[: breaks[1]].endswith("answer x")
    friendly = REVIEW_TEMPLATES["cache_friendly"].read_text(encoding="utf-8")
    prompt, breaks = render_review_with_breaks(friendly, q, ["x"], ["y"])
    # Every instruction comes before the question: only answer B's block follows the breaks.
    assert "Verdict: [[tie]]" in prompt[: breaks[0]]
    assert len(prompt) - breaks[1] < 120


def test_review_cache_key_depends_on_the_question_only() -> None:
    from arena.review import review_cache_key

    assert review_cache_key("q1") == review_cache_key("q1") != review_cache_key("q2")
    assert len(review_cache_key("q1")) <= 64  # OpenAI's limit on prompt_cache_key


def test_declared_verdict_tokens() -> None:
    from arena.config import VERDICT_PRESETS
    from arena.review import ParsedReview, VerdictScheme, parse_review

    graded = VerdictScheme(VERDICT_PRESETS["arena-hard"])
    assert parse_review("A is far ahead. [[A>>B]]", graded) == ParsedReview(Verdict.A, None, 3.0)
    assert parse_review("[[A>>B]] at first, then [[B>A]]", graded) == ParsedReview(Verdict.B)
    assert parse_review("about even: [[A=B]]", graded) == ParsedReview(Verdict.TIE)
    assert parse_review("[[A]] is not declared here", graded).verdict is Verdict.INVALID
    assert graded.token_for("A") == "[[A>B]]" and graded.token_for("B", strong=True) == "[[B>>A]]"
    pair = VerdictScheme({"[[A]]": (1.0, 1.0), "[[B]]": (0.0, 1.0), "[[C]]": (0.5, 1.0)})
    assert parse_review("a tie: [[C]]", pair).verdict is Verdict.TIE
    assert parse_review("[[tie]]", pair).verdict is Verdict.INVALID  # only declared tokens count
    assert parse_review("[[tie]]").verdict is Verdict.TIE  # the default parser, unchanged
    # A fractional share is kept; a binary scheme has no tie token.
    lean = VerdictScheme({"YES": (0.75, 1.0), "NO": (0.0, 1.0)})
    assert parse_review("... so YES", lean) == ParsedReview(Verdict.A, 0.75, None)
    assert lean.token_for("tie") is None
    # The longest token wins where two start at the same place.
    nested = VerdictScheme({"[[A]]": (1.0, 1.0), "[[A]]!": (1.0, 2.0), "[[B]]": (0.0, 1.0)})
    assert parse_review("[[A]]!", nested) == ParsedReview(Verdict.A, None, 2.0)


def test_arena_hard_capital_placeholders() -> None:
    q = Question("q1", ("What is 2+2?",))
    template = "<|User Prompt|>\n{QUESTION}\n[A] {ANSWER_A}\n[B] {ANSWER_B}\n{answer_a}"
    assert render_review_prompt(template, q, ["4"], ["5"]) == (
        "<|User Prompt|>\nWhat is 2+2?\n[A] 4\n[B] 5\n4"
    )
