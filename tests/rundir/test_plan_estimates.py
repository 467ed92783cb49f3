"""`arena plan` bounds a review's prompt by both answers, every turn."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from arena.config import load_tournament
from arena.review import render_review_prompt
from arena.types import estimate_tokens
from tests.conftest import small_tournament
from tests.rundir._support import cli


def test_review_estimate_counts_both_answers_and_every_turn(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=1)
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"question_id": "q0", "turns": ["One?", "Two?", "Three?"]}) + "\n"
    )
    cfg = yaml.safe_load(path.read_text())
    cfg["models"]["m0"]["max_tokens"] = 10
    cfg["models"]["m1"]["max_tokens"] = 500
    cfg["reviewers"] = ["m0"]
    path.write_text(yaml.safe_dump(cfg))
    t = load_tournament(path)
    q = t.questions[0]
    longest = ["x" * 4 * 500] * 3  # as long as max_tokens allows, each turn
    shortest = ["x" * 4 * 10] * 3
    prompt = estimate_tokens(len(render_review_prompt(t.review_template, q, shortest, longest)))
    review_bound = 2 * (prompt + t.config.review.max_tokens)  # two ordered battles
    plan = json.loads(cli("plan", str(path), "--json").stdout)
    row = next(r for r in plan["rows"] if r["model"] == "m0")
    # m0's row: its own answer (3 turns x 10 max_tokens + question) and both reviews.
    assert row["est_tokens"] >= review_bound + 3 * 10
