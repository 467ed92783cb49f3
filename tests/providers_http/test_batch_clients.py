"""Batch clients of the three providers, and cache-aware usage, against the fake server."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arena.config import ProviderConfig
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.providers import create_provider
from arena.providers._batch import BatchClient, JobState, job_tags, requests_digest
from arena.scheduler import PriceTable, TokenPrices
from arena.types import GenerateRequest, Message
from tests.providers_http.conftest import KEY_ENV, KEYS, TYPES, base_url

LONG = "word " * 1500  # 1,875 tokens as the simulator counts them


@pytest.fixture(scope="module")
def batch_server() -> Iterator[FakeServer]:
    config = FakeServerConfig.model_validate({"seed": 4, "batch": {"delay_seconds": 100}})
    with FakeServer(config) as server:
        yield server


def _advance(server: FakeServer, seconds: float) -> None:
    request = urllib.request.Request(
        server.url + "/fake/clock",
        data=json.dumps({"advance": seconds}).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=10).close()


def _provider(server: FakeServer, t: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY_ENV[t], KEYS[t])
    config = ProviderConfig(type=t, base_url=base_url(server, t), api_key_env=KEY_ENV[t])
    return create_provider(f"p_{t}", config, {}, 0)


def _requests(n: int, model: str = "m1") -> list[tuple[str, GenerateRequest]]:
    return [
        (
            f"r-{i:02d}",
            GenerateRequest(
                model=model,
                messages=(Message("user", LONG + f"question {i}"),),
                max_tokens=40,
                cache_breaks=(len(LONG),),
            ),
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("provider_type", TYPES)
def test_submit_poll_list_and_collect(
    batch_server: FakeServer, provider_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(batch_server, provider_type, monkeypatch)
    client: BatchClient = provider.batch_client()
    requests = _requests(4)
    tags = job_tags("tour", f"run-{provider_type}", [cid for cid, _ in requests])

    async def scenario() -> None:
        try:
            job = await client.submit(requests, tags)
            assert job.state is JobState.RUNNING and not job.state.final
            listed = await client.list_jobs(
                tags={"arena_run": f"run-{provider_type}"}, since=job.created_at - 1
            )
            assert [j.id for j in listed] == [job.id]
            if client.tags_listed:
                assert listed[0].tags == tags
                assert await client.list_jobs(tags={"arena_run": "another"}) == []
            _advance(batch_server, 100)
            job = await client.get(job.id)
            assert job.state is JobState.ENDED
            results = {r.custom_id: r for r in await client.results(job)}
            assert sorted(results) == [cid for cid, _ in requests]
            assert all(r.ok and r.executed for r in results.values())
            reads = [r.usage.cache_read_tokens or 0 for r in results.values()]
            assert max(reads) > 1024  # later lines read the shared prefix
            if provider_type == "anthropic":
                assert sum(r.usage.cache_write_tokens or 0 for r in results.values()) == 1875
        finally:
            await provider.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("provider_type", TYPES)
def test_cancel_gives_partial_results_and_unexecuted_lines(
    batch_server: FakeServer, provider_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(batch_server, provider_type, monkeypatch)
    client: BatchClient = provider.batch_client()

    async def scenario() -> None:
        try:
            job = await client.submit(_requests(4), {"arena_run": "cancel"})
            _advance(batch_server, 30)  # one of four lines is due
            job = await client.cancel(job.id)
            _advance(batch_server, 1)
            job = await client.get(job.id)
            assert job.state is JobState.CANCELLED
            results = {r.custom_id: r for r in await client.results(job)}
            assert results["r-00"].ok
            for cid in ("r-01", "r-02", "r-03"):
                assert not results[cid].ok and not results[cid].executed
                assert results[cid].error is not None
        finally:
            await provider.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("provider_type", TYPES)
def test_failed_lines_carry_status_and_error(
    provider_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = FakeServerConfig.model_validate({"seed": 1, "batch": {"line_failure": 0.5}})
    with FakeServer(config) as server:
        provider = _provider(server, provider_type, monkeypatch)
        client: BatchClient = provider.batch_client()

        async def scenario() -> None:
            try:
                job = await client.submit(_requests(12), {"arena_run": "faults"})
                job = await client.get(job.id)
                results = await client.results(job)
                failed = [r for r in results if not r.ok]
                assert len(results) == 12 and 0 < len(failed) < 12
                for r in failed:
                    assert r.executed and r.error is not None and r.error.status == 500
                    assert r.usage.total == 0
            finally:
                await provider.close()

        asyncio.run(scenario())
        counts = server.stats()["counts"]
        assert counts["requests"] == 12


def test_a_job_holds_one_model_and_unique_ids(
    batch_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = _provider(batch_server, "openai", monkeypatch).batch_client()
    mixed = _requests(1, "m1") + [("r-99", _requests(1, "m2")[0][1])]
    with pytest.raises(ValueError, match="one model"):
        asyncio.run(client.submit(mixed, {}))
    with pytest.raises(ValueError, match="unique"):
        asyncio.run(client.submit(_requests(1) * 2, {}))
    assert requests_digest(["b", "a"]) == requests_digest(["a", "b"])


@pytest.mark.parametrize("provider_type", TYPES)
def test_direct_calls_report_cached_tokens_and_are_priced_as_cache(
    batch_server: FakeServer, provider_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(batch_server, provider_type, monkeypatch)
    first, second = (r for _, r in _requests(2, f"direct-{provider_type}"))

    async def scenario() -> tuple[Any, Any]:
        try:
            return await provider.generate(first), await provider.generate(second)
        finally:
            await provider.close()

    one, two = asyncio.run(scenario())
    assert (one.usage.cache_read_tokens or 0) == 0
    assert (two.usage.cache_read_tokens or 0) >= 1024
    prices = PriceTable({second.model: TokenPrices(1.0, 2.0, cache_read=0.1, cache_write=1.25)})
    full = PriceTable({second.model: (1.0, 2.0)})
    assert prices.cost(second.model, two.usage) < 0.5 * full.cost(second.model, two.usage)


def test_cache_hints_reach_the_server_and_change_no_text(
    batch_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.providers.anthropic import message_params

    text = "shared part. first answer. second answer."
    request = GenerateRequest(
        model="hints",
        messages=(Message("user", text),),
        cache_breaks=(13, 27, 0, 999),  # out-of-range offsets are ignored
        cache_key="arena-q1",
    )
    blocks = message_params(request)["messages"][0]["content"]
    assert "".join(b["text"] for b in blocks) == text
    assert [b.get("cache_control") for b in blocks] == [{"type": "ephemeral"}] * 2 + [None]
    assert (
        message_params(GenerateRequest(model="m", messages=(Message("user", text),)))["messages"][
            0
        ]["content"]
        == text
    )  # no hints: the request is what it always was
    before = batch_server.stats()["counts"].get("openai.body.prompt_cache_key", 0)
    provider = _provider(batch_server, "openai", monkeypatch)

    async def send() -> None:
        try:
            await provider.generate(request)
        finally:
            await provider.close()

    asyncio.run(send())
    assert batch_server.stats()["counts"]["openai.body.prompt_cache_key"] == before + 1
