"""The simulator as a BatchEval scorer: quality, batch context, output, malformed replies."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from arena.batcheval import (
    BatchEvalConfig,
    CriterionConfig,
    Sample,
    load_template,
    parse_scores,
    render_prompt,
)
from arena.config import ModelConfig, ProviderConfig, Question, SimParams
from arena.providers._sim_batcheval import is_batcheval_prompt, score_batch, text_quality
from arena.providers.sim import SimProvider, find_signatures, signature
from arena.review import render_review_prompt
from arena.types import GenerateRequest, Message

CRIT = CriterionConfig.model_validate(
    {"name": "quality", "description": "How good?", "scale": {"low": 1, "high": 3}}
)
QUIET = SimParams(score_noise=0.0, score_drift=0.0)


def _prompt(
    qualities: list[float], procedure: str = "two-stage", crit: CriterionConfig = CRIT
) -> str:
    cfg = BatchEvalConfig.model_validate(
        {"scorers": ["j"], "criteria": [crit.model_dump()], "procedure": procedure}
    )
    samples = [
        Sample(f"s{i}", f"Answer {i}.\n{signature(f'w{i}', q)}", context="Q?")
        for i, q in enumerate(qualities)
    ]
    return render_prompt(load_template(cfg, Path("x.yaml")), crit, samples)


def _scores(text: str, n: int, low: float = 1, high: float = 3) -> list[float | None]:
    return parse_scores(text, n, low, high)


def test_detects_batcheval_prompts_only() -> None:
    assert is_batcheval_prompt(_prompt([0.0, 1.0]))
    assert is_batcheval_prompt(_prompt([0.0], procedure="one-stage"))
    review = render_review_prompt(
        "{question} {answer_a} {answer_b}", Question("q", ("Q?",)), ["a"], ["b"]
    )
    assert not is_batcheval_prompt(review)


def test_reads_the_signature_like_the_simulator_does() -> None:
    text = f"Some answer.\n{signature('atlas', -1.2345)}"
    assert text_quality(text) == pytest.approx(-1.2345)
    assert [s.quality for s in find_signatures(text)] == [pytest.approx(-1.2345)]
    two_turns = f"{signature('a', 1.0)} and {signature('a', 2.0)}"
    assert text_quality(two_turns) == pytest.approx(1.5)


def test_unsigned_text_gets_a_stable_pseudo_quality() -> None:
    assert text_quality("plain text") == text_quality("plain text")
    assert text_quality("plain text") != text_quality("other text")


def test_better_samples_get_higher_scores() -> None:
    qualities = [-1.5, -0.5, 0.0, 0.7, 1.6]
    parsed = _scores(score_batch(0, "j", QUIET, _prompt(qualities), "k", 1), 5)
    scores = [s for s in parsed if s is not None]
    assert len(scores) == 5
    assert scores == sorted(scores)
    assert scores[0] < scores[-1]


def test_weak_batch_inflates_and_strong_batch_deflates() -> None:
    params = SimParams(score_noise=0.0, score_drift=0.0, batch_context=0.4)
    weak = _scores(score_batch(0, "j", params, _prompt([0.0, -1.5, -1.5, -1.5]), "k", 1), 4)
    strong = _scores(score_batch(0, "j", params, _prompt([0.0, 1.5, 1.5, 1.5]), "k", 1), 4)
    mixed = _scores(score_batch(0, "j", params, _prompt([0.0, -1.5, 0.0, 1.5]), "k", 1), 4)
    assert weak[0] is not None and strong[0] is not None and mixed[0] is not None
    assert weak[0] > mixed[0] > strong[0]


def test_heterogeneous_batches_are_anchored() -> None:
    # Drift only hits batches that do not span the quality range.
    params = SimParams(score_noise=0.0, score_drift=1.0, batch_context=0.0)
    spread = {
        tuple(_scores(score_batch(0, "j", params, _prompt([-1.5, 0.0, 1.5]), f"k{i}", 1), 3))
        for i in range(5)
    }
    narrow = {
        tuple(_scores(score_batch(0, "j", params, _prompt([0.0, 0.05, 0.1]), f"k{i}", 1), 3))
        for i in range(5)
    }
    assert len(spread) == 1
    assert len(narrow) > 1


def test_two_stage_analyses_every_sample_before_the_scores() -> None:
    text = score_batch(0, "j", SimParams(), _prompt([0.1, 0.2, 0.3]), "k", 1)
    lines = text.splitlines()
    assert [ln.split(":")[0] for ln in lines[:3]] == ["Sample1", "Sample2", "Sample3"]
    assert not re.search(r"\d", "".join(ln.split(":", 1)[1] for ln in lines[:3]))  # no scores
    assert "Float Scores" in text


def test_one_stage_analyses_and_scores_each_sample_in_turn() -> None:
    prompt = _prompt([0.1, 0.2], "one-stage")
    assert is_batcheval_prompt(prompt)
    text = score_batch(0, "j", SimParams(), prompt, "k", 1)
    assert [ln.split(":")[0] for ln in text.splitlines()] == [
        "Analysis of Sample1",
        "Score of Sample1",
        "Analysis of Sample2",
        "Score of Sample2",
    ]
    assert "Float Scores" not in text
    assert all(s is not None for s in _scores(text, 2))
    for key in range(20):  # a malformed one-stage reply loses or spoils a score
        bad = score_batch(0, "j", SimParams(malformed_rate=1.0), prompt, str(key), 1)
        assert None in _scores(bad, 2)


def test_without_batch_anchoring_a_diverse_batch_drifts_like_any_other() -> None:
    # A batch spanning the range anchors the scale: the same samples score the
    # same on every call. Without anchoring, each call drifts.
    diverse = _prompt([-1.5, 0.0, 1.5])
    anchored = SimParams(score_noise=0.0)
    loose = SimParams(score_noise=0.0, batch_anchoring=False)
    calls = [str(k) for k in range(8)]
    fixed = {tuple(_scores(score_batch(0, "j", anchored, diverse, k, 1), 3)) for k in calls}
    moving = {tuple(_scores(score_batch(0, "j", loose, diverse, k, 1), 3)) for k in calls}
    assert len(fixed) == 1 and len(moving) > 1


def test_scores_stay_on_the_prompted_scale() -> None:
    crit = CriterionConfig.model_validate(
        {"name": "q", "description": "d", "scale": {"low": -1, "high": 1}}
    )
    for key in range(20):
        text = score_batch(0, "j", SimParams(), _prompt([-3.0, 0.0, 3.0], crit=crit), str(key), 1)
        scores = _scores(text, 3, -1, 1)
        assert all(s is not None and -1 <= s <= 1 for s in scores)


def test_malformed_replies_never_parse_in_full() -> None:
    params = SimParams(malformed_rate=1.0)
    for key in range(40):
        text = score_batch(0, "j", params, _prompt([0.0, 0.5, 1.0]), str(key), 1)
        assert None in _scores(text, 3)
    clean = [
        score_batch(0, "j", SimParams(), _prompt([0.0, 0.5, 1.0]), str(k), 1) for k in range(40)
    ]
    assert all(None not in _scores(t, 3) for t in clean)


def test_through_the_provider_a_repeat_draws_new_luck() -> None:
    models = {"judge": ModelConfig(provider="sim", sim=SimParams())}
    provider = SimProvider("sim", ProviderConfig(type="sim"), models, seed=1)
    request = GenerateRequest(model="judge", messages=(Message("user", _prompt([0.0] * 6)),))
    first = asyncio.run(provider.generate(request))
    second = asyncio.run(provider.generate(request))
    assert None not in _scores(first.text, 6)
    assert first.text != second.text
    again = SimProvider("sim", ProviderConfig(type="sim"), models, seed=1)
    assert asyncio.run(again.generate(request)).text == first.text  # same luck per attempt
