"""Named review templates: `review.template: default | cache_friendly` in the YAML."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.config import DEFAULT_REVIEW_TEMPLATE, REVIEW_TEMPLATES, load_tournament
from arena.pipeline import build_plan
from arena.providers.sim import SimProvider
from arena.review import review_cache_key
from arena.store import RunLog
from arena.types import GenerateRequest, GenerateResult
from tests.conftest import small_tournament


def _with_template(path: Path, name: str | None) -> Path:
    data = yaml.safe_load(path.read_text())
    data.setdefault("review", {})["template"] = name
    path.write_text(yaml.safe_dump(data))
    return path


def test_default_by_name_keeps_every_call_id(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    before = build_plan(load_tournament(path))
    named = load_tournament(_with_template(path, "default"))
    assert named.review_template_path == DEFAULT_REVIEW_TEMPLATE
    after = build_plan(named)
    assert [a.id for a in after.answers] == [a.id for a in before.answers]
    assert after.reviews.ids.tolist() == before.reviews.ids.tolist() and len(after.reviews) > 0


def test_cache_friendly_template_runs_with_the_same_verdict_parsing(tmp_path: Path) -> None:
    path = _with_template(small_tournament(tmp_path), "cache_friendly")
    t = load_tournament(path)
    assert t.review_template_path == REVIEW_TEMPLATES["cache_friendly"]
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    reviews = RunLog(tmp_path / "out").read("reviews")
    verdicts = reviews["verdict"].to_list()
    assert reviews.height > 0 and verdicts.count("invalid") == 0
    assert set(verdicts) <= {"A", "B", "tie"}


def test_cache_friendly_reviews_carry_cache_hints_and_default_ones_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[GenerateRequest] = []
    generate = SimProvider.generate

    async def recording(self: SimProvider, request: GenerateRequest) -> GenerateResult:
        seen.append(request)
        return await generate(self, request)

    monkeypatch.setattr(SimProvider, "generate", recording)
    for name in ("default", "cache_friendly"):
        root = tmp_path / name
        root.mkdir()
        path = _with_template(small_tournament(root), name)
        seen.clear()
        assert CliRunner().invoke(main, ["run", str(path)]).exit_code == 0
        reviews = [r for r in seen if "[[A]]" in r.messages[-1].content]
        assert reviews
        if name == "default":
            assert all(r.cache_breaks == () and r.cache_key is None for r in reviews)
            continue
        t = load_tournament(path)
        for r in reviews:
            prompt = r.messages[-1].content
            (q,) = [q for q in t.questions if r.cache_key == review_cache_key(q.id)]
            assert r.cache_breaks and all(0 < b <= len(prompt) for b in r.cache_breaks)
            # The question comes before the first break: the prefix shared per question.
            assert q.turns[0] in prompt[: r.cache_breaks[0]]
