"""The fake server's parts: config, per-key buckets, the HTTP surface, the command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import ConfigError
from arena.fakeserver import FakeServer, FakeServerConfig, ServerLimits, load_fake_config
from arena.fakeserver._limits import KeyLimiter


def _post(
    url: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_config_rejects_unknown_keys_and_shares_over_one(tmp_path: Path) -> None:
    bad = tmp_path / "f.yaml"
    bad.write_text("faults: {error_500: 0.7, drop: 0.5}\n")
    with pytest.raises(ConfigError, match="more than 1"):
        load_fake_config(bad)
    bad.write_text("limits: {rpn: 3}\n")
    with pytest.raises(ConfigError, match="limits.rpn: unknown key"):
        load_fake_config(bad)
    assert load_fake_config(None) == FakeServerConfig()


def test_key_limiter_buckets_hints_and_refunds() -> None:
    clock = [0.0]
    limiter = KeyLimiter(ServerLimits(rpm=120, tpm=600), clock=lambda: clock[0])  # 2/s, 10 tok/s
    assert limiter.admit(5) is None and limiter.admit(5) is None
    refusal = limiter.admit(1)
    assert refusal is not None and refusal.bucket == "requests"
    assert refusal.retry_after == pytest.approx(0.5)
    clock[0] = 1.0
    refusal = limiter.admit(8)  # requests refilled; tokens: 0 + 10 = 10 >= 8
    assert refusal is None
    limiter.refund(6)
    state = limiter.state()
    assert state.remaining_tokens == 8 and state.limit_requests == 120
    refusal = limiter.admit(9)
    assert refusal is not None and refusal.bucket == "tokens"


def test_openai_rate_limit_headers_and_body() -> None:
    config = FakeServerConfig.model_validate({"limits": {"rpm": 1}})
    with FakeServer(config) as server:
        url = server.url + "/v1/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        auth = {"Authorization": "Bearer k"}
        status, headers, ok = _post(url, body, auth)
        assert status == 200 and ok["usage"]["total_tokens"] > 0
        assert headers["x-ratelimit-remaining-requests"] == "0"
        status, headers, error = _post(url, body, auth)
        assert status == 429
        assert 55_000 <= int(headers["retry-after-ms"]) <= 60_000
        assert headers["retry-after"] == "60"
        assert error["error"]["code"] == "rate_limit_exceeded"
        status, _, error = _post(url, body, {})
        assert status == 401 and "API key" in error["error"]["message"]
        stats = server.stats()["counts"]
        assert stats["openai.status.200"] == 1 and stats["openai.status.429"] == 1


def test_gemini_rate_limit_carries_retry_info() -> None:
    with FakeServer(FakeServerConfig.model_validate({"limits": {"rpm": 1}})) as server:
        url = server.url + "/v1beta/models/m:generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        assert _post(url, body, {"x-goog-api-key": "k"})[0] == 200
        status, _, error = _post(url, body, {"x-goog-api-key": "k"})
        assert status == 429 and error["error"]["status"] == "RESOURCE_EXHAUSTED"
        (retry,) = [d for d in error["error"]["details"] if d["@type"].endswith("RetryInfo")]
        assert retry["retryDelay"].endswith("s") and float(retry["retryDelay"][:-1]) > 55


def test_anthropic_rejects_sampling_parameters_on_the_new_api_version() -> None:
    with FakeServer() as server:
        url = server.url + "/v1/messages"
        body = {
            "model": "m",
            "max_tokens": 50,
            "temperature": 0.5,
            "messages": [{"role": "user", "content": "hi"}],
        }
        status, _, error = _post(url, body, {"x-api-key": "k", "anthropic-version": "2026-10-21"})
        assert status == 400 and error["error"]["type"] == "invalid_request_error"
        status, _, ok = _post(url, body, {"x-api-key": "k", "anthropic-version": "2023-06-01"})
        assert status == 200 and ok["content"][0]["type"] == "text"


def test_bad_config_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text("limits: [1, 2]\n")
    result = CliRunner().invoke(main, ["fake-server", "--config", str(path)])
    assert result.exit_code == 2 and "limits" in result.stderr


@pytest.mark.slow
def test_command_prints_its_url_serves_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "fake-server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, proc.stderr
        url = first.rsplit(" ", 1)[-1].strip()
        with urllib.request.urlopen(f"{url}/fake/stats", timeout=10) as response:
            assert json.load(response)["counts"] == {}
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "stopped" in out
