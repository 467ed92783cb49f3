"""The shipped `three_class` review template: PRD's prompt structure in arena's words,
its variant per question category, its default temperature, its verdict tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.config import (
    DEFAULT_REVIEW_TEMPLATE,
    REVIEW_TEMPLATES,
    ConfigError,
    Question,
    load_tournament,
)
from arena.review import (
    parse_verdict,
    render_review_prompt,
    render_review_with_breaks,
    select_variant,
    template_variants,
)
from arena.store import RunLog
from arena.types import Verdict
from tests.conftest import small_tournament

THREE_CLASS = REVIEW_TEMPLATES["three_class"].read_text(encoding="utf-8")


def test_variants_by_category() -> None:
    variants = template_variants(THREE_CLASS)
    assert variants is not None and set(variants) == {"general", "coding", "math"}
    aspects = ("helpful", "relevant", "accurate", "detail")
    cases = {
        "coding": "write a program",
        "Math": "work the problem out yourself",
        "writing": "four aspects",
        None: "four aspects",
    }
    for category, marker in cases.items():
        q = Question("1", ("Solve it.",), category=category)
        prompt = render_review_prompt(THREE_CLASS, q, ["ans one"], ["ans two"])
        assert marker in prompt
        assert "{variant" not in prompt and "{question}" not in prompt
        assert prompt.count("Verdict: [[") == 3  # the 3-class verdict, one variant only
        assert "Solve it." in prompt and "ans one" in prompt and "ans two" in prompt
        if marker == "four aspects":
            assert all(a in prompt for a in aspects)
        with_breaks, breaks = render_review_with_breaks(THREE_CLASS, q, ["ans one"], ["ans two"])
        assert with_breaks == prompt and len(breaks) == 2


def test_plain_templates_are_untouched() -> None:
    for path in (DEFAULT_REVIEW_TEMPLATE, REVIEW_TEMPLATES["cache_friendly"]):
        template = path.read_text(encoding="utf-8")
        assert template_variants(template) is None
        assert select_variant(template, "coding") is template
        q = Question("1", ("Q?",), category="math")
        expected = (
            template.replace("{question}", "Q?")
            .replace("{answer_a}", "a")
            .replace("{answer_b}", "b")
            .replace("{reference}", "")
        )
        assert render_review_prompt(template, q, ["a"], ["b"]) == expected


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Assistant A is more accurate.\nVerdict: [[A]]", Verdict.A),
        ("B checks every step.\nVerdict: [[B]]", Verdict.B),
        ("Both are equally good.\nVerdict: [[tie]]", Verdict.TIE),
        ("I cannot decide.", Verdict.INVALID),
    ],
)
def test_its_verdict_tokens_parse(reply: str, verdict: Verdict) -> None:
    assert parse_verdict(reply) == verdict


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("intro\n{variant: general}\n{question}{answer_a}{answer_b}\n", "text before"),
        ("{variant: coding}\n{question}{answer_a}{answer_b}\n", "no {variant: general}"),
        (
            "{variant: general}\n{question}{answer_a}{answer_b}\n{variant: General}\nx\n",
            "two variants",
        ),
        (
            "{variant: general}\n{question}{answer_a}{answer_b}\n{variant: math}\n{question}\n",
            "variant 'math' lacks the placeholder {answer_a}",
        ),
    ],
)
def test_bad_variant_templates(tmp_path: Path, template: str, problem: str) -> None:
    (tmp_path / "mine.txt").write_text(template)
    path = small_tournament(tmp_path, extra={"review": {"template": "mine.txt"}})
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert "review.template" in str(info.value) and problem in str(info.value)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2 and problem in result.output


def test_default_temperature_is_the_papers(tmp_path: Path) -> None:
    named = load_tournament(
        small_tournament(tmp_path, extra={"review": {"template": "three_class"}})
    )
    assert named.review_settings("m0")[0] == 0.2
    own = load_tournament(
        small_tournament(tmp_path, extra={"review": {"template": "three_class", "temperature": 0}})
    )
    assert own.review_settings("m0")[0] == 0.0
    plain = load_tournament(small_tournament(tmp_path))
    assert plain.review_settings("m0")[0] == 0.0


def _categorised(tmp: Path, template: str | None) -> Path:
    extra: dict[str, Any] = {} if template is None else {"review": {"template": template}}
    path = small_tournament(tmp, models=3, questions=3, extra=extra)
    rows = [
        {"id": "q0", "category": "coding", "text": "Write a function that adds two numbers."},
        {"id": "q1", "category": "math", "text": "What is 17 * 3?"},
        {"id": "q2", "category": "writing", "text": "Write a haiku about rain."},
    ]
    (tmp / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_tournament_reviews_with_it(tmp_path: Path) -> None:
    ids: dict[str, set[str]] = {}
    for name in ("three_class", None):
        tmp = tmp_path / str(name)
        tmp.mkdir()
        path = _categorised(tmp, name)
        result = CliRunner().invoke(main, ["run", str(path)])
        assert result.exit_code == 0, result.output
        out = yaml.safe_load(path.read_text())["output"]
        reviews = RunLog(Path(out)).read("reviews", columns=["id", "verdict", "status"])
        assert reviews.height == 3 * 6 * 3  # questions x ordered pairs x reviewers
        assert set(reviews["verdict"].to_list()) <= {"A", "B", "tie"}
        ids[str(name)] = set(reviews["id"].to_list())
    # another template (and temperature) makes other review calls
    assert not ids["three_class"] & ids["None"]
