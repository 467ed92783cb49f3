"""The BatchEval stage: rounds, the log, re-asks, failures, resume."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arena.batcheval import (
    SCORES_FILE,
    TABLE,
    BatchEvalConfig,
    BatchEvalPlanner,
    BatchEvalSetup,
    Sample,
    Scorer,
    StageSummary,
    load_template,
    read_scores,
    run_standalone,
)
from arena.config import ModelConfig, ProviderConfig, RetryConfig, SimParams
from arena.providers import Provider
from arena.providers.sim import signature
from arena.runner import Runner
from arena.scheduler import Scheduler
from arena.store import RunLog
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

CRITERIA = [
    {"name": "helpfulness", "description": "Helps?", "scale": {"low": 1, "high": 3}},
    {"name": "clarity", "description": "Clear?", "scale": {"low": 0, "high": 10}},
]


def _samples(n: int) -> tuple[Sample, ...]:
    return tuple(
        Sample(f"s{i}", f"Answer {i}.\n{signature('w', (i % 7 - 3) / 2)}") for i in range(n)
    )


def _setup(out: Path, **section: Any) -> BatchEvalSetup:
    cfg = BatchEvalConfig.model_validate(
        {
            "scorers": ["judge", "critic"],
            "criteria": CRITERIA,
            "batch_size": 4,
            "rounds": 3,
            **section,
        }
    )
    return BatchEvalSetup(
        path=out / "x.yaml",
        name="t",
        config=cfg,
        template=load_template(cfg, out / "x.yaml"),
        providers={"sim": ProviderConfig(type="sim")},
        models={
            "judge": ModelConfig(provider="sim", sim=SimParams(malformed_rate=0.2)),
            "critic": ModelConfig(provider="sim", model="critic-v2", sim=SimParams()),
        },
        retry=RetryConfig(max_attempts=2, backoff_base=0, backoff_max=0),
        seed=3,
        output_dir=out,
    )


def _log(out: Path) -> pl.DataFrame:
    return RunLog(out).read(TABLE).sort("id")


def test_every_sample_scored_once_per_round_and_final_is_the_mean(tmp_path: Path) -> None:
    samples = _samples(10)
    summary = asyncio.run(run_standalone(_setup(tmp_path), samples))
    log = _log(tmp_path)
    # 2 criteria x 2 scorers x 3 rounds x 3 batches (10 samples, batch size 4)
    assert summary.planned == summary.completed + summary.invalid == 36
    assert summary.pending == summary.failed == 0
    assert log["batch_id"].n_unique() == 36
    per_round = log.group_by(["criterion", "scorer", "round"]).agg(
        pl.col("sample_id").sort().alias("ids")
    )
    assert per_round.height == 12
    for ids in per_round["ids"].to_list():
        assert ids == sorted(s.id for s in samples)
    assert set(log["scorer"].to_list()) == {"judge", "critic"}
    assert summary.reasked > 0  # the judge is sometimes malformed
    scores = read_scores(tmp_path / SCORES_FILE)
    assert scores is not None and scores.height == 10 * 2 * 2
    for row in scores.iter_rows(named=True):
        logged = log.filter(
            (pl.col("sample_id") == row["sample_id"])
            & (pl.col("criterion") == row["criterion"])
            & (pl.col("scorer") == row["scorer"])
        ).sort("round")
        values = [v for v in logged["score"].to_list() if v is not None]
        assert row["round_scores"] == logged["score"].to_list()
        assert row["score"] == pytest.approx(sum(values) / len(values))
        assert row["rounds_scored"] + row["rounds_missing"] == 3


def test_one_stage_scores_each_sample_after_its_analysis(tmp_path: Path) -> None:
    summary = asyncio.run(run_standalone(_setup(tmp_path, procedure="one-stage"), _samples(6)))
    log = _log(tmp_path)
    critic = log.filter(pl.col("scorer") == "critic")  # never malformed: every score read
    assert (critic["status"] == "ok").all() and critic["score"].null_count() == 0
    assert critic["text"].str.contains("Analysis of Sample1:").all()
    assert critic["text"].str.contains("Score of Sample1: ").all()
    assert not critic["text"].str.contains("Float Scores").any()
    assert summary.pending == summary.failed == 0


def test_critic_is_called_by_its_provider_side_id(tmp_path: Path) -> None:
    asyncio.run(run_standalone(_setup(tmp_path), _samples(4)))
    assert set(_log(tmp_path).filter(pl.col("scorer") == "critic")["status"].to_list()) == {"ok"}


def test_resume_skips_everything_logged(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    asyncio.run(run_standalone(setup, _samples(9)))
    before = _log(tmp_path)
    again = asyncio.run(run_standalone(setup, _samples(9)))
    assert again.skipped == again.planned and again.completed == 0
    assert _log(tmp_path).equals(before)


def _copy_rows(src: Path, dst: Path, keep: Callable[[pl.DataFrame], pl.DataFrame]) -> int:
    rows = keep(RunLog(src).read(TABLE)).to_dicts()

    async def write() -> None:
        async with RunLog(dst).writer() as w:
            for row in rows:
                await w.write(TABLE, row)

    asyncio.run(write())
    return len(rows)


def test_resume_from_a_partial_log_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    ref, part = tmp_path / "ref", tmp_path / "part"
    samples = _samples(11)
    asyncio.run(run_standalone(_setup(ref), samples))
    reference = _log(ref)
    # Rounds 1 and 2 complete, and a torn round-3 batch (only some of its rows).
    torn = reference.filter(pl.col("round") == 3)["batch_id"].sort()[0]

    def keep(df: pl.DataFrame) -> pl.DataFrame:
        partial = df.filter(pl.col("batch_id") == torn).sort("position").head(2)
        return pl.concat([df.filter(pl.col("round") <= 2), partial])

    _copy_rows(ref, part, keep)
    resumed = asyncio.run(run_standalone(_setup(part), samples))
    assert resumed.skipped == reference.filter(pl.col("round") <= 2)["batch_id"].n_unique()
    after = _log(part)
    cols = ["id", "batch_id", "sample_id", "round", "score", "status", "text", "reask_text"]
    assert after.select(cols).equals(reference.select(cols))
    ref_scores, part_scores = read_scores(ref / SCORES_FILE), read_scores(part / SCORES_FILE)
    assert ref_scores is not None and part_scores is not None
    assert part_scores.equals(ref_scores)


# -- the stage with a scripted provider ---------------------------------------------------


class Scripted(Provider):
    """Replies by a function of (prompt, attempt number of that prompt)."""

    reply: Callable[[str, int], str]

    def __init__(self, reply: Callable[[str, int], str]) -> None:
        super().__init__("p", ProviderConfig(type="scripted"), {}, 0)
        self.reply = reply
        self.calls: dict[str, int] = {}

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        prompt = request.messages[-1].content
        self.calls[prompt] = self.calls.get(prompt, 0) + 1
        text = self.reply(prompt, self.calls[prompt])
        return GenerateResult(text, Usage(input_tokens=101, output_tokens=13))


def _n(prompt: str) -> int:
    return len(re.findall(r"\[The start of Sample\d+\]", prompt))


def _line(n: int, skip: int | None = None) -> str:
    return (
        "Float Scores: ["
        + ", ".join(f"Sample{k}: 2.{k}" for k in range(1, n + 1) if k != skip)
        + "]"
    )


def _run_stage(
    tmp_path: Path,
    reply: Callable[[str, int], str],
    *,
    rounds: int = 1,
    stop: bool = False,
    n: int = 3,
    composition: str = "paper",
    box: dict[str, Scheduler] | None = None,
) -> tuple[StageSummary, pl.DataFrame, Scripted]:
    cfg = BatchEvalConfig.model_validate(
        {
            "scorers": ["j"],
            "criteria": CRITERIA[:1],
            "batch_size": 3,
            "rounds": rounds,
            "composition": composition,
        }
    )
    provider = Scripted(reply)
    sched = Scheduler({"p": provider}, {}, RetryConfig(max_attempts=1))
    if stop:
        sched.stop()
    if box is not None:
        box["sched"] = sched
    log = RunLog(tmp_path)

    async def go() -> StageSummary:
        async with log.writer() as w:
            planner = BatchEvalPlanner(
                cfg,
                load_template(cfg, tmp_path / "x.yaml"),
                [Scorer("j", "p", "j-1", {"name": "j"})],
                seed=0,
                samples=_samples(n),
                logged=log.read(TABLE),
            )
            await Runner([planner], sched, w, log, run_id="r1").run()
            return planner.summary()

    summary = asyncio.run(go())
    return summary, log.read(TABLE).sort("position"), provider


def test_missing_score_is_reasked_once_and_filled(tmp_path: Path) -> None:
    summary, log, provider = _run_stage(
        tmp_path, lambda p, attempt: _line(_n(p), skip=2 if attempt == 1 else None)
    )
    assert list(provider.calls.values()) == [2]
    assert summary.reasked == 1 and summary.completed == 1 and summary.unscored == 0
    assert log["score"].to_list() == [2.1, 2.2, 2.3]
    assert log["status"].to_list() == ["ok"] * 3
    assert log["reasked"].to_list() == [True] * 3
    assert log["reask_text"][0] == _line(3)
    # each row carries its share of both calls' tokens; the shares sum to the totals
    assert log["tokens_in"].sum() == 2 * 101 and log["tokens_out"].sum() == 2 * 13
    assert log["attempts"].to_list() == [2, 2, 2]


def test_a_stop_before_the_reask_keeps_the_first_reply_and_resumes_with_the_reask(
    tmp_path: Path,
) -> None:
    box: dict[str, Scheduler] = {}

    def reply(prompt: str, attempt: int) -> str:
        if attempt == 1:
            box["sched"].stop()  # Ctrl-C while the first reply is on its way
            return _line(_n(prompt), skip=2)
        return _line(_n(prompt))

    summary, log, provider = _run_stage(tmp_path, reply, box=box)
    assert list(provider.calls.values()) == [1] and summary.pending == 1
    # The reply that arrived is logged (not paid again): rows `partial`, its scores.
    assert log["status"].to_list() == ["partial"] * 3
    assert log["score"].to_list() == [2.1, None, 2.3]
    assert log["tokens_in"].sum() == 101 and log["text"][0] == _line(3, skip=2)
    # The next run asks only the re-ask; the rows are an uninterrupted run's.
    again, log, provider = _run_stage(tmp_path, lambda p, a: _line(_n(p)))
    assert list(provider.calls.values()) == [1]
    assert again.completed == 1 and again.reasked == 1 and again.pending == 0
    assert log["score"].to_list() == [2.1, 2.2, 2.3]
    assert log["status"].to_list() == ["ok"] * 3 and log["reasked"].to_list() == [True] * 3
    assert log["text"][0] == _line(3, skip=2) and log["reask_text"][0] == _line(3)
    every = RunLog(tmp_path).read_all(TABLE, ["tokens_in", "started_at", "status"])
    assert every["tokens_in"].sum() == 2 * 101  # each reply paid once


def test_still_missing_after_the_reask_stays_unscored(tmp_path: Path) -> None:
    summary, log, provider = _run_stage(tmp_path, lambda p, attempt: _line(_n(p), skip=2))
    assert list(provider.calls.values()) == [2]  # re-asked once, never more
    assert summary.invalid == 1 and summary.completed == 0 and summary.unscored == 1
    assert log["score"].to_list() == [2.1, None, 2.3]
    assert log["status"].to_list() == ["ok", "invalid", "ok"]
    assert log["error"][1] == "no valid score for Sample2"
    assert summary.scores[1].score is None and summary.scores[1].rounds_missing == 1


def test_failed_call_is_logged_as_failed_and_retried_next_run(tmp_path: Path) -> None:
    def fail(prompt: str, attempt: int) -> str:
        raise ProviderError(ErrorKind.PERMANENT, "model gone", status=404)

    summary, log, _ = _run_stage(tmp_path, fail, rounds=2)
    assert summary.failed == 2 and summary.pending == 0
    assert log["status"].to_list() == ["failed"] * 6
    assert log["score"].null_count() == 6 and log["text"].null_count() == 6
    assert "model gone" in log["error"][0]
    again, log2, provider = _run_stage(tmp_path, lambda p, a: _line(_n(p)), rounds=2)
    assert again.skipped == 0 and again.completed == 2
    assert sum(provider.calls.values()) == 2


def test_stopped_scheduler_logs_nothing_and_leaves_batches_pending(tmp_path: Path) -> None:
    summary, log, provider = _run_stage(tmp_path, lambda p, a: _line(_n(p)), rounds=3, stop=True)
    assert summary.planned == summary.pending == 3
    assert log.height == 0 and not provider.calls


def test_unparseable_text_is_kept_raw(tmp_path: Path) -> None:
    _, log, _ = _run_stage(tmp_path, lambda p, a: "I would rather not score these.")
    assert log["text"].to_list() == ["I would rather not score these."] * 3
    assert log["status"].to_list() == ["invalid"] * 3


def test_a_reasked_batch_keeps_one_reply_never_a_mix(tmp_path: Path) -> None:
    # First reply: Sample2 missing. The re-ask: Sample3 missing, other values.
    # Both read two scores; the first reply is kept whole (no 1.6 for Sample2).
    def two_generations(prompt: str, attempt: int) -> str:
        if attempt == 1:
            return "Float Scores: [Sample1: 2.1, Sample3: 2.3]"
        return "Float Scores: [Sample1: 1.5, Sample2: 1.6]"

    summary, log, _ = _run_stage(tmp_path, two_generations)
    assert log["score"].to_list() == [2.1, None, 2.3]
    assert summary.reasked == 1 and summary.unscored == 1
    # a re-ask that reads in full replaces the first reply's scores entirely
    again = tmp_path / "again"
    again.mkdir()
    _, log, _ = _run_stage(
        again,
        lambda p, a: "Float Scores: [Sample1: 2.1]" if a == 1 else _line(3).replace("2.", "1."),
    )
    assert log["score"].to_list() == [1.1, 1.2, 1.3]


def _by_index(prompt: str, attempt: int) -> str:
    """Each sample scored by its index: s0 lowest, s6 highest."""
    blocks = re.findall(r"\[The start of Sample(\d+)\]\nAnswer (\d+)\.", prompt)
    return "Float Scores: [" + ", ".join(f"Sample{k}: {1 + int(i) / 5}" for k, i in blocks) + "]"


def _rounds(log: pl.DataFrame) -> dict[int, list[list[str]]]:
    out: dict[int, list[list[str]]] = {}
    for (r, _), group in sorted(log.group_by(["round", "batch_index"]), key=lambda kv: kv[0]):
        out.setdefault(int(r), []).append(sorted(group["sample_id"].to_list()))
    return out


def test_paper_composition_in_the_stage(tmp_path: Path) -> None:
    # 7 samples in batches of 3: two full batches and a short one of 7 mod 3 = 1.
    # Round 2 orders by round 1's scores (s0 < ... < s6): with the set-aside
    # sample removed, r[0..5] in order, batch i = {r[i], r[2 + i], r[4 + i]}.
    _, log, _ = _run_stage(tmp_path, _by_index, rounds=2, n=7)
    rounds = _rounds(log)
    assert [len(b) for b in rounds[1]] == [len(b) for b in rounds[2]] == [3, 3, 1]
    (aside,) = rounds[2][2]
    rest = [f"s{i}" for i in range(7) if f"s{i}" != aside]
    assert rounds[2][:2] == [sorted(rest[0::2]), sorted(rest[1::2])]


def test_arena_composition_in_the_stage(tmp_path: Path) -> None:
    _, log, _ = _run_stage(tmp_path, _by_index, rounds=2, n=7, composition="arena")
    rounds = _rounds(log)
    assert sorted(len(b) for b in rounds[2]) == [2, 2, 3]  # even sizes, no short batch
