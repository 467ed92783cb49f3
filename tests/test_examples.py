"""`examples:`: human-judged items of a pool shown in each review prompt (DSTC11 few-shot)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.config import ConfigError, load_tournament
from arena.engine import run_tournament
from arena.examples import choose_examples, example_ids, fold_of, render_examples
from arena.pipeline import build_plan
from arena.review import render_review_prompt
from arena.store import RunLog
from tests.conftest import small_tournament


def _pool(path: Path) -> None:
    rows = []
    for q in range(4):  # items of the tournament's own questions: must never be shown
        for n in range(2):
            rows.append(
                {
                    "id": f"own-q{q}-{n}",
                    "question_id": f"q{q}",
                    "question": f"Question number {q}?",
                    "answer_a": f"own answer {n}",
                    "answer_b": "other",
                    "verdict": "A",
                }
            )
    for n in range(6):
        rows.append(
            {
                "id": f"x{n}",
                "question_id": f"other{n}",
                "question": f"Question about {['birds', 'numbers', 'rivers'][n % 3]} {n}?",
                "answer_a": "one",
                "answer_b": "two",
                "verdict": ["A", "B", "tie"][n % 3],
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def _yaml(tmp: Path, **section: Any) -> Path:
    _pool(tmp / "pool.jsonl")
    return small_tournament(
        tmp, models=3, questions=4, extra={"examples": {"pool": "pool.jsonl", **section}}
    )


def _run(path: Path) -> Any:
    return asyncio.run(run_tournament(load_tournament(path)))


@pytest.mark.parametrize("select", ["seeded", "retrieved"])
def test_no_review_shows_an_example_of_its_own_question(tmp_path: Path, select: str) -> None:
    path = _yaml(tmp_path, k=3, select=select)
    summary = _run(path)
    assert summary.failed == 0
    reviews = RunLog(tmp_path / "out").read("reviews")
    assert reviews.height == 4 * 6 * 3
    for q, ids in reviews.select("question_id", "example_ids").iter_rows():
        assert ids is not None and len(ids) == 3
        assert not any(i.startswith(f"own-{q}-") for i in ids)
    # every review of one question shows the same examples
    per_q = reviews.group_by("question_id").agg(pl.col("example_ids").n_unique().alias("n"))
    assert (per_q["n"] == 1).all()


def test_fold_exclusion_and_retrieval_prefers_similar_questions(tmp_path: Path) -> None:
    path = _yaml(tmp_path, k=2, select="retrieved", exclude="fold", folds=2)
    t = load_tournament(path)
    pool = t.examples
    assert pool is not None
    by_id = {e.id: e for e in pool.items}
    folds = {fold_of(q.id, 2) for q in t.questions}
    assert folds == {0, 1}  # both folds hold tournament questions
    for q in t.questions:
        shown = [by_id[i] for i in example_ids(pool, q)]
        assert len(shown) == 2
        assert all(fold_of(e.question_id, 2) != fold_of(q.id, 2) for e in shown)
        # TF-IDF: the nearest eligible items are the "Question number N?" ones
        assert all(e.question.startswith("Question number") for e in shown)


def test_changing_k_reruns_the_reviews_and_nothing_else(tmp_path: Path) -> None:
    path = _yaml(tmp_path, k=2)
    first = _run(path)
    answers = first.by_stage["answers"]
    assert answers.get("completed", 0) == 4 * 3
    again = _run(path)
    assert set(again.by_stage["reviews"]) == {"skipped"}
    cfg = yaml.safe_load(path.read_text())
    cfg["examples"]["k"] = 1
    path.write_text(yaml.safe_dump(cfg))
    changed = _run(path)
    assert set(changed.by_stage["answers"]) == {"skipped"}
    assert changed.by_stage["reviews"].get("completed", 0) == 4 * 6 * 3
    assert "skipped" not in changed.by_stage["reviews"]
    reviews = RunLog(tmp_path / "out").read("reviews")
    lengths = reviews["example_ids"].list.len().value_counts().sort("example_ids")
    assert lengths["example_ids"].to_list() == [1, 2]  # both runs' rows are in the log


def test_without_examples_prompts_and_ids_are_unchanged(tmp_path: Path) -> None:
    # pinned: the ids and prompt of this tournament before `examples:` existed
    t = load_tournament(small_tournament(tmp_path))
    plan = build_plan(t)
    assert plan.reviews.ids[0] == b"r-e20622eab77f736cce4c1d96"
    assert plan.reviews.ids[-1] == b"r-81f6e5000fda6ecccbc10b55"
    prompt = render_review_prompt(t.review_template, t.questions[0], ["x"], ["y"])
    assert (
        hashlib.sha256(prompt.encode()).hexdigest()
        == "28117846772c18d0688103de66b996b4a213ae99b12d78284d1645b6898b9c76"
    )
    assert "{examples}" not in prompt


def test_examples_are_in_the_prompt_in_words_not_verdict_tokens(tmp_path: Path) -> None:
    t = load_tournament(_yaml(tmp_path, k=2))
    q = t.questions[0]
    assert t.examples is not None
    block = render_examples(t.examples, q)
    prompt = render_review_prompt(t.review_template, q, ["x"], ["y"], block)
    assert prompt.startswith("Examples judged by people")
    assert "[[" not in block and "Sample" not in block
    for item in choose_examples(t.examples, q):
        assert item.answer_a in prompt


def test_a_user_template_without_the_placeholder_is_an_error(tmp_path: Path) -> None:
    path = _yaml(tmp_path)
    (tmp_path / "mine.txt").write_text("{question}\n{answer_a}\n{answer_b}\n[[A]] [[B]] [[tie]]")
    cfg = yaml.safe_load(path.read_text())
    cfg.setdefault("review", {})["template"] = "mine.txt"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=r"review\.template.*\{examples\}"):
        load_tournament(path)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert "{examples}" in result.output
    assert not (tmp_path / "out" / "log").exists()


def test_a_bad_pool_row_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = _yaml(tmp_path)
    (tmp_path / "pool.jsonl").write_text('{"id": "a", "question_id": "q", "question": "?"}\n')
    with pytest.raises(ConfigError, match=r"pool\.jsonl.*line 1: answer_a.*missing"):
        load_tournament(path)


def test_discussions_reuse_the_reviews_written_with_examples(tmp_path: Path) -> None:
    # regression: the discussion stage looked reviews up without the examples'
    # context, so discussants wrote their initial reviews again
    path = _yaml(tmp_path, k=1)
    cfg = yaml.safe_load(path.read_text())
    cfg["discussion"] = {
        "battles": "all",
        "discussants": ["m0", "m1"],
        "allow_contestants": True,
        "max_turns": 1,
    }
    path.write_text(yaml.safe_dump(cfg))
    _run(path)
    initial = RunLog(tmp_path / "out").read("discussions").filter(pl.col("kind") == "initial")
    assert initial.height > 0
    assert initial["review_id"].is_not_null().all()


def test_fixed_shows_the_hand_picked_items_in_their_order(tmp_path: Path) -> None:
    # x4 and x1 picked by hand; own-q2-0 is of question q2, so q2's reviews leave it out
    path = _yaml(tmp_path, select="fixed", ids=["x4", "own-q2-0", "x1"])
    t = load_tournament(path)
    pool = t.examples
    assert pool is not None
    shown = {q.id: example_ids(pool, q) for q in t.questions}
    assert shown == {
        "q0": ["x4", "own-q2-0", "x1"],
        "q1": ["x4", "own-q2-0", "x1"],
        "q2": ["x4", "x1"],
        "q3": ["x4", "own-q2-0", "x1"],
    }
    summary = _run(path)
    assert summary.failed == 0
    reviews = RunLog(tmp_path / "out").read("reviews")
    logged = dict(reviews.select("question_id", "example_ids").unique("question_id").iter_rows())
    assert {q: list(ids) for q, ids in logged.items()} == shown


def test_seeded_is_the_default_and_unchanged(tmp_path: Path) -> None:
    t = load_tournament(_yaml(tmp_path, k=2))
    pool = t.examples
    assert pool is not None and pool.config.select == "seeded"
    q = t.questions[0]
    eligible = [e for e in pool.items if e.question_id != q.id]
    order = sorted(eligible, key=lambda e: hashlib.sha256(f"3\x1f{e.id}".encode()).hexdigest())
    assert example_ids(pool, q) == [e.id for e in order[:2]]


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ({"select": "fixed"}, r"examples.*select: fixed shows hand-picked items.*select: seeded"),
        ({"select": "fixed", "ids": ["x1", "nope"]}, r"examples\.ids.*not in the pool.*'nope'"),
        ({"select": "fixed", "ids": ["x1", "x2"], "k": 3}, r"k is 3 but ids lists 2"),
        ({"select": "fixed", "ids": ["x1", "x1"]}, r"listed twice"),
        ({"select": "retrieved", "ids": ["x1"]}, r"ids goes with select: fixed"),
    ],
)
def test_bad_fixed_settings_exit_2_naming_the_key(
    tmp_path: Path, section: dict[str, Any], problem: str
) -> None:
    path = _yaml(tmp_path, **section)
    with pytest.raises(ConfigError, match=problem):
        load_tournament(path)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert not (tmp_path / "out" / "log").exists()
