"""The simulator's `example_gain` knob: examples sharpen sim judges only when it is set."""

from __future__ import annotations

from pathlib import Path

from arena.batcheval import (
    BatchEvalConfig,
    CriterionConfig,
    Sample,
    load_template,
    parse_scores,
    render_prompt,
)
from arena.config import ModelConfig, ProviderConfig, ScoredExample, SimParams
from arena.examples import render_batch_examples
from arena.providers._sim_batcheval import score_batch
from arena.providers.sim import EXAMPLES_MARKER, SignedText, SimProvider, signature

CRIT = CriterionConfig.model_validate(
    {"name": "quality", "description": "How good?", "scale": {"low": 1, "high": 5}}
)
QUALITIES = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 0.2]
ITEMS = [ScoredExample("e1", None, "Some question?", "Some reply.", "quality", 3.0)]


def _prompt(examples: bool) -> str:
    cfg = BatchEvalConfig.model_validate({"scorers": ["j"], "criteria": [CRIT.model_dump()]})
    samples = [
        Sample(f"s{i}", f"Answer {i}.\n{signature(f'w{i}', q)}", context="Q?")
        for i, q in enumerate(QUALITIES)
    ]
    template = load_template(cfg, Path("x.yaml"), examples=examples)
    block = render_batch_examples(ITEMS, 1, 5) if examples else ""
    return render_prompt(template, CRIT, samples, block)


def _error(params: SimParams, prompt: str) -> float:
    """Total distance of the scores from the noise-free ones, over many calls."""
    exact = SimParams(score_noise=0.0, score_drift=0.0, batch_context=params.batch_context)
    total = 0.0
    for key in range(60):
        got = parse_scores(score_batch(1, "j", params, prompt, str(key), 1), 8, 1, 5)
        ref = parse_scores(score_batch(1, "j", exact, prompt, str(key), 1), 8, 1, 5)
        total += sum(abs((a or 0) - (b or 0)) for a, b in zip(got, ref, strict=True))
    return total


def test_off_by_default_examples_do_not_change_a_sim_scorer() -> None:
    plain, shown = _prompt(False), _prompt(True)
    assert "[The start of Example A]" in shown
    params = SimParams(score_noise=0.6, score_drift=0.5)
    for key in ("a", "b", "c"):  # the same draws: the same scores, with or without examples
        assert parse_scores(score_batch(1, "j", params, plain, key, 1), 8, 1, 5) == parse_scores(
            score_batch(1, "j", params, shown, key, 1), 8, 1, 5
        )
    knob = SimParams(score_noise=0.6, score_drift=0.5, example_gain=2.0)
    assert _error(knob, plain) == _error(params, plain)  # no examples: the knob does nothing


def test_the_knob_sharpens_a_sim_scorer_that_sees_examples() -> None:
    shown = _prompt(True)
    off = _error(SimParams(score_noise=0.6, score_drift=0.5), shown)
    on = _error(SimParams(score_noise=0.6, score_drift=0.5, example_gain=2.0), shown)
    assert on < 0.6 * off


def _right(params: SimParams, prompt: str) -> int:
    provider = SimProvider(
        "sim",
        ProviderConfig.model_validate({"type": "sim"}),
        {"r": ModelConfig(provider="sim", sim=params)},
        1,
    )
    signed = [SignedText("a", 0.4, 0), SignedText("b", 0.0, 1)]
    right = 0
    for key in range(300):
        text = provider.review("r", params, prompt, signed, ["a", "b"], str(key))
        right += "[[A]]" in text
    return right


def test_the_knob_sharpens_a_sim_reviewer_that_sees_examples() -> None:
    plain = "Which answer is better? [[A]] [[B]] [[tie]]"
    shown = f"{EXAMPLES_MARKER} (other questions):\n...\n\n{plain}"
    params = SimParams(judge_noise=1.5, tie_band=0.0)
    knob = SimParams(judge_noise=1.5, tie_band=0.0, example_gain=3.0)
    assert _right(params, shown) == _right(params, plain)  # off: examples change nothing
    assert _right(knob, plain) == _right(params, plain)  # on, no examples: nothing either
    assert _right(knob, shown) > _right(params, shown) + 30


def test_the_reviewer_knob_reads_the_examples_block_arena_renders(tmp_path: Path) -> None:
    from arena.config import load_tournament
    from arena.examples import render_examples
    from tests.test_examples import _yaml

    t = load_tournament(_yaml(tmp_path, k=1))
    assert t.examples is not None
    assert render_examples(t.examples, t.questions[0]).startswith(EXAMPLES_MARKER)
