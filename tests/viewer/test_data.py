"""RunData: filters, pages, battles, disputed battles, calls; a crafted log with known answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import arena
from arena.viewer import BattleFilter, RunData
from tests.viewer._support import PAYLOAD, cli, shared_run


def _write(directory: Path, table: str, rows: list[dict[str, Any]]) -> None:
    async def write() -> None:
        async with arena.open_log(directory).writer() as writer:
            for row in rows:
                await writer.write(table, row)

    asyncio.run(write())


def _review(rid: str, q: str, a: str, b: str, reviewer: str, verdict: str | None) -> dict[str, Any]:
    models = {"a1": "m0", "a2": "m1", "a3": "m0", "a4": "m1"}
    return {
        "id": rid,
        "status": "failed" if verdict is None else ("invalid" if verdict == "invalid" else "ok"),
        "error": "HTTP 500" if verdict is None else None,
        "question_id": q,
        "model_a": models[a],
        "model_b": models[b],
        "reviewer": reviewer,
        "answer_a_id": a,
        "answer_b_id": b,
        "text": None if verdict is None else f"Verdict: [[{verdict}]]",
        "verdict": verdict,
    }


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    """Two questions, m0 against m1, reviewed by m0, m1 and m2 (no tournament.json)."""
    _write(
        tmp_path,
        "answers",
        [
            {
                "id": "a1",
                "status": "ok",
                "question_id": "q1",
                "model": "m0",
                "answer_turns": ["short"],
            },
            {
                "id": "a2",
                "status": "ok",
                "question_id": "q1",
                "model": "m1",
                "answer_turns": ["a much longer answer"],
            },
            {
                "id": "a3",
                "status": "ok",
                "question_id": "q2",
                "model": "m0",
                "answer_turns": ["also short"],
            },
            {
                "id": "a4",
                "status": "ok",
                "question_id": "q2",
                "model": "m1",
                "answer_turns": ["the longest answer of them all"],
            },
        ],
    )
    _write(
        tmp_path,
        "reviews",
        [
            # q1: votes for a1 (r1, r3), for a2 (r2), one tie (r4): dispute 1 - 2/4.
            _review("r1", "q1", "a1", "a2", "m0", "A"),
            _review("r2", "q1", "a1", "a2", "m1", "B"),
            _review("r3", "q1", "a2", "a1", "m0", "B"),
            _review("r4", "q1", "a2", "a1", "m1", "tie"),
            _review("r5", "q1", "a2", "a1", "m2", None),
            # q2: every counted verdict for a4: dispute 0.
            _review("r6", "q2", "a3", "a4", "m0", "B"),
            _review("r7", "q2", "a4", "a3", "m1", "A"),
            _review("r8", "q2", "a4", "a3", "m2", "invalid"),
        ],
    )
    return tmp_path


def test_filters_and_pages_of_a_crafted_log(crafted: Path) -> None:
    data = RunData(crafted)
    assert data.notes and "question texts unavailable" in data.notes[0]
    assert data.facets() == {
        "models": ["m0", "m1"],
        "reviewers": ["m0", "m1", "m2"],
        "verdicts": ["A", "B", "tie", "invalid", "failed"],
        "categories": [],
    }
    ids = lambda where: [r["id"] for r in data.page(where, 1, 100)["rows"]]  # noqa: E731
    assert ids(BattleFilter(reviewer="m2")) == ["r5", "r8"]
    assert ids(BattleFilter(verdict="failed")) == ["r5"]
    assert ids(BattleFilter(verdict="invalid")) == ["r8"]
    assert ids(BattleFilter(verdict="B", reviewer="m0")) == ["r3", "r6"]
    assert ids(BattleFilter(model="nobody")) == []
    page = data.page(BattleFilter(), 2, 3)
    assert (page["total"], page["pages"], page["page"]) == (8, 3, 2)
    assert [r["id"] for r in page["rows"]] == ["r4", "r5", "r6"]
    # Out-of-range pages are clamped to the last one.
    last = data.page(BattleFilter(), 99, 3)
    assert last["page"] == 3 and [r["id"] for r in last["rows"]] == ["r7", "r8"]


def test_battle_and_disputed_known_answer(crafted: Path) -> None:
    data = RunData(crafted)
    battle = data.battle("r3")
    assert battle is not None
    assert battle["question"] == {"id": "q1", "turns": [], "category": None}
    assert [a["model"] for a in battle["answers"]] == ["m1", "m0"]  # r3 shows a2 first
    assert [r["id"] for r in battle["reviews"]] == ["r1", "r2", "r3", "r4", "r5"]
    assert battle["reviews"][4]["verdict"] == "failed" and battle["reviews"][4]["error"]
    assert data.battle("nope") is None
    top = data.disputed(5)
    assert [b["question"]["id"] for b in top] == ["q1", "q2"]
    assert top[0]["dispute"] == pytest.approx(0.5)
    assert top[0]["votes"] == {"first": 2, "second": 1, "ties": 1}
    assert top[1]["dispute"] == 0.0 and top[1]["votes"] == {"first": 0, "second": 2, "ties": 0}
    assert len(data.disputed(1)) == 1 and data.disputed(0) == []


def test_calls_per_stage(crafted: Path) -> None:
    calls = {c["table"]: c for c in RunData(crafted).calls()}
    assert set(calls) == {"answers", "reviews"}
    assert (calls["reviews"]["calls"], calls["reviews"]["ok"]) == (8, 6)
    assert (calls["reviews"]["invalid"], calls["reviews"]["failed"]) == (1, 1)


def test_a_sim_run_in_full(tmp_path_factory: pytest.TempPathFactory) -> None:
    run = shared_run(tmp_path_factory)
    data = RunData(run)
    assert data.notes == []
    assert data.facets()["categories"] == ["danger", "math", "writing"]
    assert data.select(BattleFilter(category="math")).height == 2 * 6 * 3
    # The crafted question keeps its text as is (escaping is the renderers' job).
    danger = data.select(BattleFilter(category="danger"))["id"][0]
    battle = data.battle(danger)
    assert battle is not None and battle["question"]["turns"] == ["Explain " + PAYLOAD]
    assert len(battle["reviews"]) == 6 and all(a is not None for a in battle["answers"])
    # Some battle of the run was discussed: its turns come with it.
    discussed = arena.open_log(run).read("discussions").filter(pl.col("kind") == "final")
    first = discussed.row(0, named=True)
    review = data.reviews.filter(
        (pl.col("answer_a_id") == first["answer_a_id"])
        & (pl.col("answer_b_id") == first["answer_b_id"])
    )["id"][0]
    full = data.battle(review)
    assert full is not None and full["discussions"]
    assert {d["outcome"] for d in full["discussions"]} <= {"agreed", "unresolved"}
    assert all(t["kind"] in ("initial", "turn") for d in full["discussions"] for t in d["turns"])
    disputed = data.disputed(100)
    assert len(disputed) == 4 * 3  # every question and pair
    shares = [b["dispute"] for b in disputed]
    assert shares == sorted(shares, reverse=True)


def test_reads_the_log_as_a_run_extends_it(tmp_path: Path) -> None:
    from tests.conftest import small_tournament

    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    assert cli("run", str(yaml_path)).exit_code == 0
    data = RunData(tmp_path / "out")
    before = data.page(BattleFilter(), 1, 10)["total"]
    assert before == 2 * 6 * 3
    assert data.refresh() is False  # nothing changed
    lines = (tmp_path / "q.jsonl").read_text() + json.dumps({"id": "new", "text": "New?"}) + "\n"
    (tmp_path / "q.jsonl").write_text(lines)
    assert cli("run", str(yaml_path)).exit_code == 0
    assert data.refresh() is True
    assert data.page(BattleFilter(), 1, 10)["total"] == 3 * 6 * 3
    assert data.select(BattleFilter())["question_id"].unique().sort().to_list() == [
        "new",
        "q0",
        "q1",
    ]
