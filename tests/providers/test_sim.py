"""The simulator: deterministic, reads answers back, biased as configured."""

from __future__ import annotations

import asyncio

import pytest

from arena.config import DEFAULT_REVIEW_TEMPLATE, ModelConfig, ProviderConfig, Question, SimParams
from arena.providers import create_provider
from arena.providers.sim import SimProvider, find_signatures
from arena.review import parse_verdict, render_review_prompt
from arena.types import GenerateRequest, Message, ProviderError, Verdict

TEMPLATE = DEFAULT_REVIEW_TEMPLATE.read_text()


def _provider(seed: int = 1, **models: SimParams) -> SimProvider:
    cfgs = {name: ModelConfig(provider="sim", sim=p) for name, p in models.items()}
    provider = create_provider("sim", ProviderConfig(type="sim"), cfgs, seed)
    assert isinstance(provider, SimProvider)
    return provider


def _ask(p: SimProvider, model: str, text: str) -> str:
    req = GenerateRequest(model=model, messages=(Message("user", text),))
    return asyncio.run(p.generate(req)).text


def test_answers_are_deterministic_and_signed() -> None:
    p1 = _provider(good=SimParams(skill=2.0))
    p2 = _provider(good=SimParams(skill=2.0))
    a, b = _ask(p1, "good", "What is 2+2?"), _ask(p2, "good", "What is 2+2?")
    assert a == b
    (sig,) = find_signatures(a)
    assert sig.author == "good"
    assert _ask(_provider(seed=2, good=SimParams(skill=2.0)), "good", "What is 2+2?") != a


def _verdicts(p: SimProvider, reviewer: str, first: str, second: str, n: int = 60) -> list[Verdict]:
    out = []
    for i in range(n):
        q = Question(str(i), (f"question {i}?",))
        a = _ask(p, first, q.turns[0])
        b = _ask(p, second, q.turns[0])
        out.append(parse_verdict(_ask(p, reviewer, render_review_prompt(TEMPLATE, q, [a], [b]))))
    return out


def test_reviewer_prefers_the_better_answer() -> None:
    p = _provider(
        strong=SimParams(skill=2.0), weak=SimParams(skill=-2.0), judge=SimParams(judge_noise=0.3)
    )
    v1 = _verdicts(p, "judge", "strong", "weak")
    v2 = _verdicts(p, "judge", "weak", "strong")
    assert v1.count(Verdict.A) >= 55
    assert v2.count(Verdict.B) >= 55


def test_position_bias_and_self_preference() -> None:
    even = dict(skill=0.0, answer_noise=0.0)
    p = _provider(
        x=SimParams(**even),
        y=SimParams(**even),
        biased=SimParams(position_bias=3.0, judge_noise=0.1),
        selfish=SimParams(**even, self_preference=3.0, judge_noise=0.1),
    )
    assert _verdicts(p, "biased", "x", "y").count(Verdict.A) == 60
    assert _verdicts(p, "selfish", "y", "selfish").count(Verdict.B) == 60


def test_malformed_share() -> None:
    p = _provider(a=SimParams(skill=1), b=SimParams(), judge=SimParams(malformed_rate=0.5))
    invalid = _verdicts(p, "judge", "a", "b", n=100).count(Verdict.INVALID)
    assert 30 <= invalid <= 70


def test_transient_failures_are_classified_and_retry_draws_new_luck() -> None:
    p = _provider(flaky=SimParams(failure_rate=0.5))
    errors = 0
    for k in range(40):
        req = GenerateRequest(model="flaky", messages=(Message("user", f"hi {k}"),))
        failures = 0
        while True:  # a failed call retried draws new luck, so it gets through
            try:
                asyncio.run(p.generate(req))
                break
            except ProviderError as exc:
                failures += 1
                assert exc.kind.value == "transient" and exc.status == 503
                assert failures < 30
        errors += failures > 0
    assert 8 <= errors <= 32


def test_attempt_luck_is_the_same_in_every_run() -> None:
    """The n-th attempt of a call fails or not alike in a fresh provider (a new run)."""

    def outcomes() -> list[bool]:
        p = _provider(flaky=SimParams(failure_rate=0.5))
        req = GenerateRequest(model="flaky", messages=(Message("user", "same"),))
        seen = []
        for _ in range(12):
            try:
                asyncio.run(p.generate(req))
                seen.append(True)
            except ProviderError:
                seen.append(False)
        return seen

    first = outcomes()
    assert first == outcomes()
    # After a success the counter is dropped: asked again, the call draws its
    # first attempt's luck, which succeeded the first time it was reached.
    assert first[first.index(True) + 1 :] == first[: len(first) - first.index(True) - 1]


def test_unknown_model_is_permanent_error() -> None:
    p = _provider(a=SimParams())
    with pytest.raises(ProviderError) as info:
        _ask(p, "nope", "hi")
    assert info.value.kind.value == "permanent"
