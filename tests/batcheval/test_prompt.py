"""Prompt templates: the shipped files, rendering, and custom templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.batcheval import (
    DEFAULT_TEMPLATES,
    REQUIRED_PLACEHOLDERS,
    BatchEvalConfig,
    CriterionConfig,
    Sample,
    load_template,
    parse_scores,
    render_prompt,
    sample_format,
    score_format,
)
from arena.config import ConfigError

CRITERION = CriterionConfig.model_validate(
    {
        "name": "helpfulness",
        "description": "Does it help the asker?",
        "scale": {"low": 1, "high": 3},
        "anchors": {3: "fully", 1: "not at all", 2: "partly"},
    }
)


def _cfg(**kw: object) -> BatchEvalConfig:
    return BatchEvalConfig.model_validate(
        {"scorers": ["j"], "criteria": [CRITERION.model_dump()], **kw}
    )


@pytest.mark.parametrize("procedure", ["two-stage", "one-stage"])
def test_shipped_templates_render_every_placeholder(procedure: str) -> None:
    template = load_template(_cfg(procedure=procedure), Path("x.yaml"))
    assert template == DEFAULT_TEMPLATES[procedure].read_text()
    samples = [Sample("a", "First {answer}.", context="Why?"), Sample("b", "Second.")]
    prompt = render_prompt(template, CRITERION, samples)
    assert "{" not in prompt.replace("{answer}", "")
    assert (
        "[The start of Sample1]\n[Context]\nWhy?\n[Response]\nFirst {answer}.\n"
        "[The end of Sample1]" in prompt
    )
    assert "[The start of Sample2]\nSecond.\n[The end of Sample2]" in prompt
    assert "helpfulness: Does it help the asker?" in prompt
    assert "- 1: not at all\n- 2: partly\n- 3: fully" in prompt  # anchors in scale order
    two_stage = procedure == "two-stage"
    assert ("Float Scores: [Sample1: <score>, Sample2: <score>]" in prompt) == two_stage
    assert ("Stage 1" in prompt) == two_stage
    # one-stage, as in the paper: each sample analysed, then scored, in turn
    per_sample = (
        "Analysis of Sample1: <analysis>\nScore of Sample1: <score>\n"
        "Analysis of Sample2: <analysis>\nScore of Sample2: <score>"
    )
    assert (per_sample in prompt) == (not two_stage)


def test_one_stage_format_round_trips_through_the_parser() -> None:
    lines = sample_format(3).replace("<analysis>", "fine").replace("<score>", "1.5")
    assert parse_scores(lines, 3, 1, 3) == [1.5, 1.5, 1.5]


def test_score_format_round_trips_through_the_parser() -> None:
    line = score_format(3).replace("<score>", "2.5")
    assert parse_scores(line, 3, 1, 3) == [2.5, 2.5, 2.5]


def test_without_anchors_the_scale_ends_are_described() -> None:
    crit = CriterionConfig(name="c", description="d")
    prompt = render_prompt("{anchors}|{samples}|{score_format}", crit, [Sample("a", "x")])
    assert prompt.startswith("- 1: the worst possible\n- 5: the best possible|")


def test_custom_template_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("Rate {n}: {samples}\n{score_format}")
    template = load_template(_cfg(template="mine.txt"), tmp_path / "t.yaml")
    assert template.startswith("Rate {n}")


def test_custom_template_missing_or_lacking_placeholders(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="batcheval.template: template file not found"):
        load_template(_cfg(template="nope.txt"), tmp_path / "t.yaml")
    (tmp_path / "bad.txt").write_text("Rate these: {samples}")
    with pytest.raises(ConfigError, match=r"lacks the placeholder \{score_format\}"):
        load_template(_cfg(template="bad.txt"), tmp_path / "t.yaml")
    assert REQUIRED_PLACEHOLDERS == ("{samples}", "{score_format}")
    (tmp_path / "one.txt").write_text("Rate these: {samples}\n{score_format}")
    with pytest.raises(ConfigError, match=r"lacks the placeholder \{sample_format\}"):
        load_template(_cfg(template="one.txt", procedure="one-stage"), tmp_path / "t.yaml")
