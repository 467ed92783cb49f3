"""Sim reviewers facing answers the simulator did not write judge them by their text."""

from __future__ import annotations

import asyncio

from arena.config import DEFAULT_REVIEW_TEMPLATE, ModelConfig, ProviderConfig, Question, SimParams
from arena.providers import create_provider
from arena.providers._sim_text import TEXT_QUALITY_SD, answer_regions, text_quality
from arena.providers.sim import SimProvider
from arena.review import parse_verdict, render_review_prompt
from arena.types import GenerateRequest, Message, Verdict

TEMPLATE = DEFAULT_REVIEW_TEMPLATE.read_text()
# A fair judge that still decides: no noise, no position bias, no tie band.
FAIR = SimParams(judge_noise=0.0, position_bias=0.0, tie_band=0.0)


def _provider(**models: SimParams) -> SimProvider:
    cfgs = {name: ModelConfig(provider="sim", sim=p) for name, p in models.items()}
    provider = create_provider("sim", ProviderConfig(type="sim"), cfgs, 4)
    assert isinstance(provider, SimProvider)
    return provider


def _ask(p: SimProvider, model: str, text: str) -> str:
    return asyncio.run(p.generate(GenerateRequest(model, (Message("user", text),)))).text


def test_text_quality_is_a_stable_function_of_the_text() -> None:
    assert text_quality(1, "An answer.") == text_quality(1, "An   answer.\n")
    assert text_quality(1, "An answer.") != text_quality(1, "Another answer.")
    assert text_quality(1, "An answer.") != text_quality(2, "An answer.")
    draws = [text_quality(0, f"answer {i}") for i in range(2000)]
    mean = sum(draws) / len(draws)
    sd = (sum((d - mean) ** 2 for d in draws) / len(draws)) ** 0.5
    assert abs(mean) < 0.05 and abs(sd - TEXT_QUALITY_SD) < 0.05


def test_file_answers_get_readable_consistent_verdicts() -> None:
    p = _provider(judge=FAIR)
    swaps = 0
    for i in range(30):
        q = Question(str(i), (f"Question {i}?",))
        x, y = f"First file answer to {i}.", f"Second file answer to {i}, longer."
        ab = parse_verdict(_ask(p, "judge", render_review_prompt(TEMPLATE, q, [x], [y])))
        ba = parse_verdict(_ask(p, "judge", render_review_prompt(TEMPLATE, q, [y], [x])))
        assert ab is not Verdict.INVALID and ba is not Verdict.INVALID
        # A fair judge sees the same qualities in both orders.
        assert {ab, ba} == {Verdict.A, Verdict.B}
        better_first = text_quality(4, x) > text_quality(4, y)
        swaps += (ab is Verdict.A) == better_first
    assert swaps == 30


def test_sim_answer_against_a_file_answer() -> None:
    p = _provider(strong=SimParams(skill=3.0), judge=FAIR)
    wins = 0
    for i in range(20):
        q = Question(str(i), (f"Question {i}?",))
        sim_answer = _ask(p, "strong", q.turns[0])
        prompt = render_review_prompt(TEMPLATE, q, ["A plain file answer."], [sim_answer])
        wins += parse_verdict(_ask(p, "judge", prompt)) is Verdict.B
    assert wins >= 19  # skill 3 against an average text


def test_other_judge_prompt_markers_and_unmarked_prompts() -> None:
    mt_bench_style = (
        "[The Start of Assistant A's Answer]\nalpha\n[The End of Assistant A's Answer]\n"
        "<|The Start of Assistant B's Answer|>\nbeta\n<|The End of Assistant B's Answer|>"
    )
    regions = answer_regions(mt_bench_style)
    assert regions is not None and "alpha" in regions[0] and "beta" in regions[1]
    p = _provider(judge=FAIR)
    unmarked = "Compare: one / two. Answer with [[A]] or [[B]] or [[tie]]."
    assert parse_verdict(_ask(p, "judge", unmarked)) is Verdict.TIE
    assert "⟦sim author=judge" in _ask(p, "judge", "Just a question?")  # still answers


def _longer_wins(length_bias: float) -> int:
    """How often the longer of two file answers wins, over 40 questions in both orders."""
    p = _provider(judge=SimParams(judge_noise=0.5, tie_band=0.0, length_bias=length_bias))
    wins = 0
    for i in range(40):
        q = Question(str(i), (f"Question {i}?",))
        short = f"Answer {i} in brief."
        long = f"Answer {i} at length: " + " ".join(f"point{k} explained." for k in range(40))
        ab = parse_verdict(_ask(p, "judge", render_review_prompt(TEMPLATE, q, [long], [short])))
        ba = parse_verdict(_ask(p, "judge", render_review_prompt(TEMPLATE, q, [short], [long])))
        wins += (ab is Verdict.A) + (ba is Verdict.B)
    return wins


def test_length_bias_uses_the_real_lengths_of_file_answers() -> None:
    # Without length bias the hashed qualities decide: about half each way. With it, the
    # longer answer (about 80 words against 4: a relative gap near 1.9) nearly always wins.
    plain, biased = _longer_wins(0.0), _longer_wins(2.0)
    assert 20 <= plain <= 60
    assert biased >= 76 and biased > plain + 20
    # The opposite bias favours the shorter one.
    assert _longer_wins(-2.0) <= 4
