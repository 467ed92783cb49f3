"""The order calls go out in, against the fake server's prompt cache.

A cached prefix lives 5 minutes; a batch job's lines are done spread over
the job's time, so lines sharing a prefix must sit side by side in the job.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import ProviderConfig, load_tournament
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.pipeline import AllPairsPlanner, Plan, ReviewSelector, Round, Selection, build_plan
from arena.providers import create_provider
from arena.runner import CallResult, RunContext
from arena.scheduler import BatchDispatcher, BatchSettings
from arena.session import run_planners, tournament_setup
from arena.store import RunLog
from arena.types import GenerateRequest, Message
from tests.providers_http.conftest import (
    KEY_ENV,
    KEYS,
    TYPES,
    FakeClock,
    base_url,
    write_tournament,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

GROUPS, PER_GROUP = 5, 4
# Each group's shared part: 1,500 tokens as the simulator counts them, over the 1,024 minimum.
PREFIXES = [f"group {g} " + "word " * 1500 for g in range(GROUPS)]


def _server(delay: float) -> FakeServer:
    return FakeServer(
        FakeServerConfig.model_validate({"seed": 4, "batch": {"delay_seconds": delay}})
    )


def _interleaved() -> list[tuple[str, GenerateRequest]]:
    """Requests of five prefix groups, one of each group in turn (g0, g1, ..., g4, g0, ...)."""
    out = []
    for i in range(PER_GROUP):
        for g in range(GROUPS):
            text = PREFIXES[g] + f"then the part of request {i}"
            request = GenerateRequest(model="m1", messages=(Message("user", text),), max_tokens=20)
            out.append((f"g{g}-r{i}", request))
    return out


async def _run_job(server: FakeServer, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """The requests through a batch dispatcher (one job); the cache hits among them."""
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    config = ProviderConfig(
        type="openai", base_url=base_url(server, "openai"), api_key_env=KEY_ENV["openai"]
    )
    provider = create_provider("p_openai", config, {}, 0)
    client = getattr(provider, "batch_client")()  # noqa: B009 - an SDK provider's method
    log = RunLog(tmp)
    settings = BatchSettings(max_requests=100, max_wait=0.05, poll_seconds=0.02)
    try:
        async with log.writer() as writer:
            dispatcher = BatchDispatcher(
                {"p_openai": client},
                {"p_openai": settings},
                writer,
                log,
                tournament="t",
                run_id="r",
            )
            results = await asyncio.gather(
                *(dispatcher.request("p_openai", cid, req) for cid, req in _interleaved())
            )
            await dispatcher.close()
    finally:
        await provider.close()
    assert all(r is not None and r.ok for r in results)
    return sum(1 for r in results if r is not None and r.usage.cache_read_tokens)


def test_a_batch_job_puts_lines_sharing_a_prefix_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20 lines over 2,000 s: 100 s apart. Sent in turn, a group's lines would be
    # 500 s apart, past the 300 s lifetime: no hit at all. Side by side, every
    # line but each group's first reads its group's prefix.
    with _server(delay=2000.0) as server, FakeClock(server, 400.0):
        hits = asyncio.run(_run_job(server, tmp_path, monkeypatch))
        counts = server.stats()["counts"]
    assert hits == GROUPS * (PER_GROUP - 1)
    assert counts["cache.hits"] == GROUPS * (PER_GROUP - 1)


def test_batch_lines_meet_the_cache_at_their_own_moment_in_the_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two lines with one prefix, done 600 s apart in their job: the first's entry
    # has expired when the second is done, though both are collected at one look.
    monkeypatch.setenv(KEY_ENV["openai"], KEYS["openai"])
    with _server(delay=1200.0) as server:
        config = ProviderConfig(
            type="openai", base_url=base_url(server, "openai"), api_key_env=KEY_ENV["openai"]
        )
        provider = create_provider("p_openai", config, {}, 0)
        client = getattr(provider, "batch_client")()  # noqa: B009 - an SDK provider's method
        requests = [
            (
                f"r{i}",
                GenerateRequest(
                    model="m1",
                    messages=(Message("user", PREFIXES[0] + f"part {i}"),),
                    max_tokens=20,
                ),
            )
            for i in range(2)
        ]

        async def run() -> list[int]:
            try:
                job = await client.submit(requests, {"arena_tournament": "t"})
                body = json.dumps({"advance": 1300.0}).encode()
                req = urllib.request.Request(
                    server.url + "/fake/clock", body, headers={"Content-Type": "application/json"}
                )
                await asyncio.to_thread(lambda: urllib.request.urlopen(req, timeout=5).read())
                job = await client.get(job.id)
                results = await client.results(job)
                assert all(r.ok for r in results)
                return [r.usage.cache_read_tokens or 0 for r in results]
            finally:
                await provider.close()

        reads = asyncio.run(run())
    assert reads == [0, 0]


def test_a_sampled_design_marks_answer_a_for_the_cache_only_when_another_review_shares_it(
    tmp_path: Path, server: FakeServer
) -> None:
    # Long answers (the prefix through answer A passes 1,024 tokens), Anthropic's
    # rules: a marked prefix is written at 1.25x. Half of the units: some first
    # answers are shown to their reviewer once, some twice.
    models = {"long_a": "p_anthropic", "long_b": "p_anthropic", "long_c": "p_anthropic"}
    extra = {
        "models": {m: {"provider": p, "max_tokens": 2000} for m, p in models.items()},
        "review": {"max_tokens": 200, "template": "cache_friendly"},
        "sampling": {"strategy": "uniform", "budget": 0.5},
    }
    path = write_tournament(tmp_path, server, models=models, questions=6, extra=extra)
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    result = CliRunner(env=env).invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    reviews = RunLog(tmp_path / "out").read("reviews")
    uses = reviews.group_by("question_id", "model_a", "reviewer").agg(
        pl.len().alias("n"), pl.col("tokens_cache_write").sum().alias("written")
    )
    once, shared = uses.filter(pl.col("n") == 1), uses.filter(pl.col("n") > 1)
    assert once.height > 0 and shared.height > 0
    assert once["written"].sum() == 0  # nothing written that no review reads back
    assert shared["written"].sum() > 0
    # The run's summary line gives the tokens billed, cache reads and writes apart.
    calls = pl.concat(
        [
            RunLog(tmp_path / "out")
            .read(table)
            .select("tokens_in", "tokens_cache_read", "tokens_cache_write", "tokens_out")
            for table in ("answers", "reviews")
        ]
    ).sum()
    tin, read, written, out = calls.row(0)
    assert read > 0 and written > 0
    assert (
        f"tokens in {tin} (cache read {read}, write {written}), out {out} (reasoning 0)"
        in result.output
    )


class _Rounds(ReviewSelector):
    """Fixed rounds, each after the previous round's results (as an adaptive design's)."""

    def __init__(self, rounds: list[list[int]]) -> None:
        self.rounds = rounds
        self.open: set[str] = set()
        self.plan: Plan | None = None

    def start(self, ctx: RunContext) -> Selection:
        return Selection(sum(len(r) for r in self.rounds), 0, [self._next()])

    def on_result(self, result: CallResult) -> list[Round]:
        self.open.discard(result.call.id)
        if result.call.table == "reviews" and not self.open and self.rounds:
            return [self._next()]
        return []

    def _next(self) -> Round:
        indices = self.rounds.pop(0)
        assert self.plan is not None
        self.open = {self.plan.reviews.id_at(i) for i in indices}
        return Round(indices)


def test_a_prefix_shown_again_only_in_a_later_round_is_not_marked(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV["anthropic"], KEYS["anthropic"])
    models = {"long_a": "p_anthropic", "long_b": "p_anthropic", "long_c": "p_anthropic"}
    extra = {
        "models": {m: {"provider": p, "max_tokens": 2000} for m, p in models.items()},
        "review": {"max_tokens": 200, "template": "cache_friendly"},
    }
    t = load_tournament(write_tournament(tmp_path, server, models=models, questions=1, extra=extra))
    plan = build_plan(t)
    by_key: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(plan.reviews):
        by_key[(r.model_a, r.reviewer, r.model_b)].append(i)
    # long_a first, judged by long_b: against long_b in round 1, long_c in round 2
    # (one prefix, two rounds: each review alone in its round); then long_b first,
    # judged by long_c, against both in round 3 (one prefix, twice in one round).
    once, again = by_key[("long_a", "long_b", "long_b")], by_key[("long_a", "long_b", "long_c")]
    pair = by_key[("long_b", "long_c", "long_a")] + by_key[("long_b", "long_c", "long_c")]
    selector = _Rounds([once, again, pair])
    selector.plan = plan
    asyncio.run(run_planners([AllPairsPlanner(t, plan, selector)], tournament_setup(t)))
    reviews = RunLog(tmp_path / "out").read("reviews").sort("started_at")
    assert reviews.height == 4
    written = reviews["tokens_cache_write"].to_list()
    assert written[:2] == [0, 0]  # alone in their rounds: no break after answer A
    assert sum(written[2:]) > 0  # shared within the round: written once, read once
    # the other review of round 3 reads it (whichever of the two started first)
    assert sum(reviews["tokens_cache_read"].to_list()[2:]) > 0
