"""The discussion stage inside `arena run`, and `arena discuss` on an existing run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

import arena.discuss  # noqa: F401  (registers the stage)
from arena.cli import main
from arena.config import DiscussionConfig, load_tournament
from arena.discuss import (
    STATE_FILE,
    TABLE,
    discussion_stats,
    ranked_reviewers,
    select_battles,
    top2,
)
from arena.engine import run_tournament
from arena.pipeline import build_plan
from arena.providers.sim import SimProvider
from arena.store import RunLog
from arena.types import GenerateRequest, GenerateResult
from tests.conftest import small_tournament


def _yaml(tmp: Path, section: dict[str, Any] | None, **kw: Any) -> Path:
    extra: dict[str, Any] = {"discussion": section} if section is not None else {}
    return small_tournament(
        tmp,
        models=3,
        questions=4,
        sim={"judge_noise": 0.8, "position_bias": 0.4},
        extra=extra,
        **kw,
    )


def _run(path: Path) -> Any:
    return asyncio.run(run_tournament(load_tournament(path)))


def _table(out: Path) -> pl.DataFrame:
    return RunLog(out).read(TABLE).sort("id")


def test_discusses_every_selected_battle_once_and_resumes(tmp_path: Path) -> None:
    section = {
        "trigger": ["tie", "inconsistent"],
        "discussants": ["m0", "m1"],
        "leader": "alternate",
        "allow_contestants": True,
    }
    path = _yaml(tmp_path, section)
    summary = _run(path)
    out = tmp_path / "out"
    calls = summary.by_stage["discussions"]
    assert summary.pending == 0 and summary.failed == 0
    assert summary.planned == build_plan(load_tournament(path)).size + sum(calls.values())
    table = _table(out)
    finals = table.filter(pl.col("kind") == "final")
    expected = select_battles(RunLog(out).read("reviews"), DiscussionConfig.model_validate(section))
    assert expected.height > 0
    got = finals.select("question_id", "model_a", "model_b", "trigger").sort(
        "question_id", "model_a", "model_b"
    )
    assert got.equals(expected)
    assert set(finals["leader"].to_list()) == {"m0", "m1"}  # alternate
    assert (finals["leader"] != finals["follower"]).all()
    assert set(finals["outcome"].to_list()) <= {"agreed", "unresolved"}
    # initial reviews are the logged reviews (m0 and m1 are reviewers)
    initial = table.filter(pl.col("kind") == "initial")
    reviews = (
        RunLog(out).read("reviews").select(pl.col("id").alias("review_id"), "reviewer", "text")
    )
    joined = initial.join(reviews, on="review_id")
    assert joined.height == initial.height
    assert (joined["speaker"] == joined["reviewer"]).all()
    assert (joined["text"] == joined["text_right"]).all()
    state = json.loads((out / STATE_FILE).read_text())
    assert state["outcome"] == "replace" and state["context"] == finals["context"][0]

    again = _run(path)
    assert set(again.by_stage["discussions"]) == {"skipped"}
    assert again.by_stage["discussions"]["skipped"] == calls["completed"] + calls.get("invalid", 0)
    assert _table(out).equals(table)


def test_top2_uses_the_peerrank_weights_of_the_reviews_logged(tmp_path: Path) -> None:
    path = _yaml(tmp_path, None)
    _run(path)  # reviews only
    out = tmp_path / "out"
    reviews = RunLog(out).read("reviews")
    path.write_text(
        path.read_text() + "discussion:\n  trigger: [inconsistent]\n  allow_contestants: true\n"
    )
    _run(path)  # every review is replayed before the first battle is dispatched
    finals = _table(out).filter(pl.col("kind") == "final")
    assert finals.height > 0
    pair = top2(reviews, ["m0", "m1", "m2"], ["m0", "m1", "m2"])
    assert {frozenset(p) for p in finals.select("leader", "follower").iter_rows()} == {
        frozenset(pair)
    }


def test_all_pairs_discuss_each_battle_and_a_named_leader_leads(tmp_path: Path) -> None:
    section = {
        "trigger": "inconsistent",
        "discussants": {"all-pairs": ["m0", "m1", "m2"]},
        "leader": "m2",
        "max_turns": 2,
        "allow_contestants": True,
    }
    path = _yaml(tmp_path, section)
    _run(path)
    finals = _table(tmp_path / "out").filter(pl.col("kind") == "final")
    per_battle = finals.group_by("battle_id").agg(pl.len().alias("n"))
    assert (per_battle["n"] == 3).all()
    with_m2 = finals.filter((pl.col("leader") == "m2") | (pl.col("follower") == "m2"))
    assert (with_m2["leader"] == "m2").all()
    assert (finals["turn"] <= 2).all()


def test_discussants_that_are_not_reviewers_write_their_own_initial_reviews(tmp_path: Path) -> None:
    path = small_tournament(
        tmp_path,
        models=3,
        questions=3,
        sim={"judge_noise": 0.8},
        extra={
            "models": {
                **{
                    f"m{i}": {"provider": "sim", "sim": {"skill": float(3 - i), "judge_noise": 0.8}}
                    for i in range(3)
                },
                "judge": {"provider": "sim", "sim": {"skill": 2.0}},
            },
            "discussion": {
                "trigger": "inconsistent",
                "discussants": ["judge", "m0"],
                "allow_contestants": True,
            },
        },
    )
    summary = _run(path)
    assert summary.pending == 0
    initial = _table(tmp_path / "out").filter(pl.col("kind") == "initial")
    judge = initial.filter(pl.col("speaker") == "judge")
    assert judge.height > 0 and judge["review_id"].is_null().all()
    assert judge["tokens_in"].min() > 0  # type: ignore[operator]
    assert initial.filter(pl.col("speaker") == "m0")["review_id"].is_not_null().all()


def test_arena_discuss_on_an_existing_run(tmp_path: Path) -> None:
    # five reviewers: the default top2 leaves three to discuss each battle
    path = small_tournament(tmp_path, models=5, questions=2, sim={"judge_noise": 0.8})
    _run(path)
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(main, ["discuss", str(out), "--trigger", "disagreement", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    table = _table(out)
    finals = table.filter(pl.col("kind") == "final")
    assert report["discussions"] == finals.height > 0
    assert set(finals["trigger"].to_list()) == {"disagreement"}
    assert report["agreed"] + report["unresolved"] == report["discussions"]
    assert discussion_stats(table).discussions == finals.height

    again = runner.invoke(main, ["discuss", str(out), "--trigger", "disagreement", "--json"])
    assert again.exit_code == 0
    assert set(json.loads(again.stdout.strip().splitlines()[-1])["calls"]) == {"skipped"}
    assert _table(out).equals(table)


def test_top2_runs_are_reproducible_whatever_order_reviews_arrive_in(tmp_path: Path) -> None:
    section = {"trigger": ["tie", "inconsistent"], "discussants": "top2"}
    tables = []
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        # Random latencies shuffle the order in which reviews arrive.
        path = small_tournament(
            root,
            models=4,
            questions=4,
            sim={
                "judge_noise": 0.8,
                "position_bias": 0.4,
                "latency_mean": 0.004,
                "latency_sd": 0.004,
            },
            extra={"discussion": section},
        )
        _run(path)
        tables.append(
            _table(root / "out").select(
                "id", "discussion_id", "turn", "speaker", "leader", "text", "preference", "verdict"
            )
        )
    assert tables[0].height > 0
    assert tables[0].equals(tables[1])


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[GenerateRequest]:
    """Every request that reaches a sim provider, in order."""
    seen: list[GenerateRequest] = []
    generate = SimProvider.generate

    async def record(self: SimProvider, request: GenerateRequest) -> GenerateResult:
        seen.append(request)
        return await generate(self, request)

    monkeypatch.setattr(SimProvider, "generate", record)
    return seen


def test_defaults_follow_the_paper_at_the_provider_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = _recording(monkeypatch)
    path = small_tournament(
        tmp_path,
        models=5,
        questions=3,
        sim={"judge_noise": 0.8, "position_bias": 0.4, "self_preference": 0.5},
        extra={"discussion": {"temperatures": {"m1": 0.9}}},
    )
    t = load_tournament(path)
    summary = _run(path)
    assert summary.pending == 0 and summary.failed == 0
    table = _table(tmp_path / "out")
    finals = table.filter(pl.col("kind") == "final")
    assert finals.height > 0
    # every discussion ran the configured 4 turns (no early exit), unless a reply was unreadable
    readable = finals.filter(~pl.col("reason").fill_null("").str.contains("unreadable"))
    assert (readable["turn"] == 4).all()
    agreed = finals.filter(pl.col("outcome") == "agreed")
    assert agreed.height > 0 and agreed["verdict"].is_not_null().all()
    unresolved = finals.filter(pl.col("outcome") == "unresolved")
    assert unresolved["verdict"].is_null().all()
    # no discussant is a contestant of its battle; top2 = the two best-weighted eligible
    order = ranked_reviewers(RunLog(tmp_path / "out").read("reviews"), t.contestants, t.reviewers)
    for row in finals.iter_rows(named=True):
        pair = {row["leader"], row["follower"]}
        assert not pair & {row["model_a"], row["model_b"]}
        eligible = [m for m in order if m not in (row["model_a"], row["model_b"])]
        assert pair == set(eligible[:2])
    # each turn's request is a multi-message chat: role as system, own turns as
    # assistant messages, every user message ending with the role reminder
    turns = [r for r in requests if r.system and "You are Reviewer" in r.system]
    assert len(turns) == table.filter(pl.col("kind") == "turn").height
    shapes = set()
    for request in turns:
        roles = [m.role for m in request.messages]
        shapes.add(tuple(roles))
        assert roles[0] == roles[-1] == "user"
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))  # alternating
        for m in request.messages:
            assert m.content.endswith(request.system) == (m.role == "user")
        assert "[The start of Reviewer 1's initial review]" in request.messages[0].content
        assert request.temperature == (0.9 if request.model == "m1" else 0.2)
    assert ("user", "assistant", "user") in shapes  # turns 3 and 4 carry the history
    assert any(r.model == "m1" for r in turns)


def test_stop_on_agreement_ends_early(tmp_path: Path) -> None:
    section = {"stop_on_agreement": True}
    path = small_tournament(
        tmp_path,
        models=5,
        questions=3,
        sim={"judge_noise": 0.8, "position_bias": 0.4},
        extra={"discussion": section},
    )
    _run(path)
    finals = _table(tmp_path / "out").filter(pl.col("kind") == "final")
    agreed = finals.filter(pl.col("outcome") == "agreed")
    assert agreed.height > 0 and (agreed["turn"] < 4).any()


def test_allow_contestants_lets_a_contestant_discuss(tmp_path: Path) -> None:
    section = {"discussants": ["m0", "m1"], "allow_contestants": True, "trigger": "inconsistent"}
    path = small_tournament(
        tmp_path,
        models=3,
        questions=4,
        sim={"judge_noise": 0.8, "position_bias": 0.6},
        extra={"discussion": section},
    )
    _run(path)
    finals = _table(tmp_path / "out").filter(pl.col("kind") == "final")
    inside = finals.filter((pl.col("model_a") == "m0") | (pl.col("model_b") == "m0"))
    assert inside.height > 0
    # without the option, the same pair skips every battle m0 or m1 is in
    section.pop("allow_contestants")
    (tmp_path / "b").mkdir()
    path = small_tournament(
        tmp_path / "b",
        models=4,
        questions=4,
        sim={"judge_noise": 0.8, "position_bias": 0.6},
        extra={"discussion": section},
    )
    _run(path)
    finals = _table(tmp_path / "b" / "out").filter(pl.col("kind") == "final")
    assert finals.height > 0
    assert set(finals["model_a"].to_list()) | set(finals["model_b"].to_list()) == {"m2", "m3"}
