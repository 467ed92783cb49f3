"""The plan: every ordered pair judged by every reviewer, with stable content ids."""

from __future__ import annotations

from pathlib import Path

import yaml

from arena.config import load_tournament
from arena.pipeline import build_plan
from tests.conftest import small_tournament


def test_plan_covers_both_positions_for_every_reviewer(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=4, questions=3))
    plan = build_plan(t)
    assert len(plan.answers) == 4 * 3
    assert len(plan.reviews) == 3 * 4 * 3 * 4
    keys = {(r.question.id, r.model_a, r.model_b, r.reviewer) for r in plan.reviews}
    assert len(keys) == len(plan.reviews)
    assert ("q1", "m0", "m2", "m3") in keys and ("q1", "m2", "m0", "m3") in keys
    assert all(r.model_a != r.model_b for r in plan.reviews)
    assert len({c.id for c in plan.answers} | {r.id for r in plan.reviews}) == plan.size


def test_ids_are_stable_and_follow_their_dependencies(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=2)
    first = build_plan(load_tournament(path))
    assert build_plan(load_tournament(path)) == first

    data = yaml.safe_load(path.read_text())
    data["models"]["m1"]["temperature"] = 0.1
    data["output"] = str(tmp_path / "elsewhere")  # where results go is not a dependency
    path.write_text(yaml.safe_dump(data))
    second = build_plan(load_tournament(path))
    changed_answers = {
        a.model for a, b in zip(first.answers, second.answers, strict=True) if a.id != b.id
    }
    assert changed_answers == {"m1"}
    for a, b in zip(first.reviews, second.reviews, strict=True):
        touches_m1 = "m1" in (a.model_a, a.model_b, a.reviewer)
        assert (a.id != b.id) == touches_m1
