"""The fake server's prompt cache (per API rules) and its batch endpoints, over plain HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arena.fakeserver import FakeServer, FakeServerConfig

KEY = "key-cache-1"
# 1,500 five-character words: 7,500 characters, 1,875 tokens as the simulator counts.
LONG = "word " * 1500


def _call(
    url: str, body: Any = None, headers: dict[str, str] | None = None, method: str | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method=method or ("POST" if data is not None else "GET"),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    text = raw.decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


OPENAI = {"Authorization": f"Bearer {KEY}"}
ANTHROPIC = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
GEMINI = {"x-goog-api-key": KEY}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    config = FakeServerConfig.model_validate({"batch": {"delay_seconds": 100}})
    with FakeServer(config) as s:
        yield s


def _advance(server: FakeServer, seconds: float) -> None:
    status, _ = _call(server.url + "/fake/clock", {"advance": seconds})
    assert status == 200


def _openai(server: FakeServer, text: str) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": 20}
    status, out = _call(server.url + "/v1/chat/completions", body, OPENAI)
    assert status == 200, out
    usage: dict[str, Any] = out["usage"]
    return usage


def test_openai_caches_prefixes_from_1024_tokens_in_128_token_steps(
    server: FakeServer,
) -> None:
    first = _openai(server, LONG + "first question")
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    second = _openai(server, LONG + "second question")
    # 1,875 shared tokens: the longest step at or below them is 1,792 (1,024 + 6 x 128).
    assert second["prompt_tokens_details"]["cached_tokens"] == 1792
    short = "word " * 600  # 750 tokens: under the minimum
    _openai(server, short + "a")
    assert _openai(server, short + "b")["prompt_tokens_details"]["cached_tokens"] == 0
    counts = server.stats()["counts"]
    assert counts["cache.hits"] == 1 and counts["cache.read_tokens"] == 1792


def test_cache_entries_expire_after_five_minutes_without_a_hit(server: FakeServer) -> None:
    _openai(server, LONG + "q1")
    _advance(server, 299)
    assert _openai(server, LONG + "q2")["prompt_tokens_details"]["cached_tokens"] == 1792
    _advance(server, 299)  # the hit renewed the entry
    assert _openai(server, LONG + "q3")["prompt_tokens_details"]["cached_tokens"] == 1792
    _advance(server, 301)
    assert _openai(server, LONG + "q4")["prompt_tokens_details"]["cached_tokens"] == 0


def _anthropic(
    server: FakeServer, blocks: list[dict[str, Any]], model: str = "m"
) -> dict[str, Any]:
    body = {"model": model, "max_tokens": 20, "messages": [{"role": "user", "content": blocks}]}
    status, out = _call(server.url + "/v1/messages", body, ANTHROPIC)
    assert status == 200, out
    usage: dict[str, Any] = out["usage"]
    return usage


def test_anthropic_writes_at_breakpoints_and_reads_them_back(server: FakeServer) -> None:
    marked = {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}
    first = _anthropic(server, [marked, {"type": "text", "text": "question one"}])
    assert first["cache_creation_input_tokens"] == 1875
    assert first["cache_read_input_tokens"] == 0
    assert first["input_tokens"] == 3  # the rest: "question one" (12 characters)
    second = _anthropic(server, [marked, {"type": "text", "text": "question two"}])
    assert second["cache_read_input_tokens"] == 1875
    assert second["cache_creation_input_tokens"] == 0
    # Without a breakpoint nothing is cached or read.
    plain = {"type": "text", "text": LONG}
    third = _anthropic(server, [plain, {"type": "text", "text": "question two"}])
    assert third["cache_read_input_tokens"] == 0 and third["cache_creation_input_tokens"] == 0


def test_gemini_reports_implicit_cache_hits(server: FakeServer) -> None:
    url = server.url + "/v1beta/models/m:generateContent"

    def ask(text: str) -> dict[str, Any]:
        status, out = _call(
            url, {"contents": [{"role": "user", "parts": [{"text": text}]}]}, GEMINI
        )
        assert status == 200
        meta: dict[str, Any] = out["usageMetadata"]
        return meta

    assert "cachedContentTokenCount" not in ask(LONG + "one")
    assert ask(LONG + "two")["cachedContentTokenCount"] == 1792


def test_cache_off_reports_no_cached_tokens() -> None:
    config = FakeServerConfig.model_validate({"cache": {"enabled": False}})
    with FakeServer(config) as server:
        _openai(server, LONG + "a")
        assert _openai(server, LONG + "b")["prompt_tokens_details"]["cached_tokens"] == 0


def _anthropic_batch(server: FakeServer, n: int) -> dict[str, Any]:
    requests = [
        {
            "custom_id": f"r-{i}",
            "params": {
                "model": "m",
                "max_tokens": 20,
                "messages": [{"role": "user", "content": f"question {i}"}],
            },
        }
        for i in range(n)
    ]
    status, out = _call(server.url + "/v1/messages/batches", {"requests": requests}, ANTHROPIC)
    assert status == 200, out
    return dict(out)


def test_batch_lines_finish_over_time_and_count_as_requests(server: FakeServer) -> None:
    job = _anthropic_batch(server, 4)
    assert job["processing_status"] == "in_progress"
    url = f"{server.url}/v1/messages/batches/{job['id']}"
    _advance(server, 50)  # lines are due at 25, 50, 75 and 100 seconds
    _, now = _call(url, headers=ANTHROPIC)
    assert now["request_counts"]["succeeded"] == 2 and now["request_counts"]["processing"] == 2
    status, _ = _call(url + "/results", headers=ANTHROPIC)
    assert status == 400  # results only once the batch ended
    _advance(server, 50)
    _, now = _call(url, headers=ANTHROPIC)
    assert now["processing_status"] == "ended" and now["results_url"].endswith("/results")
    _, text = _call(url + "/results", headers=ANTHROPIC)
    results = [json.loads(line) for line in text.splitlines()]
    assert [r["custom_id"] for r in results] == ["r-0", "r-1", "r-2", "r-3"]
    assert {r["result"]["type"] for r in results} == {"succeeded"}
    counts = server.stats()["counts"]
    assert counts["requests"] == 4 and counts["billed"] == 4
    assert counts["anthropic.batch.lines"] == 4


def test_cancelled_batch_keeps_done_lines_and_cancels_the_rest(server: FakeServer) -> None:
    job = _anthropic_batch(server, 4)
    url = f"{server.url}/v1/messages/batches/{job['id']}"
    _advance(server, 30)
    _, cancelling = _call(url + "/cancel", {}, ANTHROPIC)
    assert cancelling["processing_status"] == "canceling"
    _advance(server, 100)
    _, ended = _call(url, headers=ANTHROPIC)
    assert ended["processing_status"] == "ended"
    assert ended["request_counts"]["succeeded"] == 1 and ended["request_counts"]["canceled"] == 3
    _, text = _call(url + "/results", headers=ANTHROPIC)
    kinds = [json.loads(line)["result"]["type"] for line in text.splitlines()]
    assert kinds == ["succeeded", "canceled", "canceled", "canceled"]
    assert server.stats()["counts"]["requests"] == 1  # cancelled lines are not billed


def test_openai_batch_expires_lines_not_done_in_time_and_lists_by_metadata() -> None:
    config = FakeServerConfig.model_validate(
        {"batch": {"delay_seconds": 100, "expire_seconds": 60}}
    )
    with FakeServer(config) as server:
        lines = "".join(
            json.dumps(
                {
                    "custom_id": f"c-{i}",
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": {"model": "m", "messages": [{"role": "user", "content": f"q{i}"}]},
                }
            )
            + "\n"
            for i in range(4)
        )
        boundary = "XyZ"
        form = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"'
            f"\r\nContent-Type: application/jsonl\r\n\r\n{lines}\r\n--{boundary}--\r\n"
        ).encode()
        request = urllib.request.Request(
            server.url + "/v1/files",
            data=form,
            method="POST",
            headers={**OPENAI, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            file_id = json.load(response)["id"]
        body = {
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
            "metadata": {"arena_run": "run-7"},
        }
        status, batch = _call(server.url + "/v1/batches", body, OPENAI)
        assert status == 200 and batch["status"] == "in_progress"
        _advance(server, 61)
        _, batch = _call(f"{server.url}/v1/batches/{batch['id']}", headers=OPENAI)
        assert batch["status"] == "expired"
        assert batch["request_counts"] == {"total": 4, "completed": 2, "failed": 2}
        _, out = _call(f"{server.url}/v1/files/{batch['output_file_id']}/content", headers=OPENAI)
        assert [json.loads(x)["custom_id"] for x in out.splitlines()] == ["c-0", "c-1"]
        _, err = _call(f"{server.url}/v1/files/{batch['error_file_id']}/content", headers=OPENAI)
        codes = [json.loads(x)["error"]["code"] for x in err.splitlines()]
        assert codes == ["batch_expired", "batch_expired"]
        _, listed = _call(server.url + "/v1/batches", headers=OPENAI)
        assert [b["metadata"] for b in listed["data"]] == [{"arena_run": "run-7"}]
        # Another key sees none of them.
        _, other = _call(server.url + "/v1/batches", headers={"Authorization": "Bearer k2"})
        assert other["data"] == []


def test_batch_line_failures_are_partial_and_unbilled() -> None:
    config = FakeServerConfig.model_validate({"seed": 3, "batch": {"line_failure": 0.5}})
    with FakeServer(config) as server:
        job = _anthropic_batch(server, 20)
        url = f"{server.url}/v1/messages/batches/{job['id']}"
        _, ended = _call(url, headers=ANTHROPIC)
        counts = ended["request_counts"]
        assert counts["succeeded"] + counts["errored"] == 20
        assert 0 < counts["errored"] < 20
        stats = server.stats()["counts"]
        assert stats["requests"] == 20 and stats["billed"] == counts["succeeded"]


def test_gemini_batch_over_the_v1_and_v1beta_paths(server: FakeServer) -> None:
    body = {
        "batch": {
            "displayName": "arena run=3",
            "inputConfig": {
                "requests": {
                    "requests": [
                        {
                            "request": {"contents": [{"role": "user", "parts": [{"text": "q"}]}]},
                            "metadata": {"key": "g-1"},
                        }
                    ]
                }
            },
        }
    }
    status, op = _call(server.url + "/v1beta/models/m:batchGenerateContent", body, GEMINI)
    assert status == 200 and op["metadata"]["state"] == "BATCH_STATE_RUNNING"
    _advance(server, 100)
    _, done = _call(f"{server.url}/v1/{op['name']}", headers=GEMINI)
    assert done["done"] and done["metadata"]["state"] == "BATCH_STATE_SUCCEEDED"
    responses = done["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    assert responses[0]["metadata"] == {"key": "g-1"} and "response" in responses[0]
    _, listed = _call(server.url + "/v1/batches", headers=GEMINI)
    assert [o["metadata"]["displayName"] for o in listed["operations"]] == ["arena run=3"]


def test_each_model_caches_only_from_its_own_documented_minimum(server: FakeServer) -> None:
    """1,875 shared tokens: enough for Sonnet 4.5 (1,024), not for Opus 4.5 or Haiku 4.5
    (4,096) nor for Gemini 2.5 (2,048); a longer prefix caches on those too."""
    marked = {"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}
    for model, cached in [
        ("claude-sonnet-4-5", 1875),
        ("claude-opus-4-5-20251101", 0),
        ("claude-haiku-4-5", 0),
    ]:
        _anthropic(server, [marked, {"type": "text", "text": "question one"}], model)
        second = _anthropic(server, [marked, {"type": "text", "text": "question two"}], model)
        assert second["cache_read_input_tokens"] == cached, model
        if not cached:
            assert second["cache_creation_input_tokens"] == 0, model
    longer = {"type": "text", "text": LONG * 3, "cache_control": {"type": "ephemeral"}}
    _anthropic(server, [longer, {"type": "text", "text": "one"}], "claude-opus-4-5")
    again = _anthropic(server, [longer, {"type": "text", "text": "two"}], "claude-opus-4-5")
    assert again["cache_read_input_tokens"] == 3 * 1875

    def gemini(model: str, text: str) -> int:
        url = server.url + f"/v1beta/models/{model}:generateContent"
        status, out = _call(
            url, {"contents": [{"role": "user", "parts": [{"text": text}]}]}, GEMINI
        )
        assert status == 200
        return int(out["usageMetadata"].get("cachedContentTokenCount", 0))

    gemini("gemini-2.5-flash", LONG + "one")
    assert gemini("gemini-2.5-flash", LONG + "two") == 0
    gemini("gemini-2.5-flash", LONG * 2 + "one")
    # 3,750 shared tokens: the longest 128-token step from 2,048 at or below them.
    assert gemini("gemini-2.5-flash", LONG * 2 + "two") == 2048 + 13 * 128
