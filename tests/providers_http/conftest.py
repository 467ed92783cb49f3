"""A fake provider server for the whole package, and helpers to reach it."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.config import ProviderConfig
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.providers import Provider, create_provider

TYPES = ("openai", "anthropic", "gemini")
KEY_ENV = {
    "openai": "TEST_OPENAI_KEY",
    "anthropic": "TEST_ANTHROPIC_KEY",
    "gemini": "TEST_GEMINI_KEY",
}
KEYS = {t: f"key-{t}-0123" for t in TYPES}
FORBIDDEN_KEY = "key-forbidden-4567"
# A key per provider type with a 1 request/minute limit (separate buckets).
RPM1_KEYS = {t: f"key-rpm1-{t}" for t in TYPES}
# Never printed or stored anywhere: the leak tests look for it.
CANARY = "sk-CANARY-9f3b7e1d-do-not-print-5c2a"

SERVER_CONFIG: dict[str, Any] = {
    "seed": 5,
    "keys": [*KEYS.values(), *RPM1_KEYS.values(), FORBIDDEN_KEY],
    "forbidden_keys": [FORBIDDEN_KEY],
    "key_limits": {k: {"rpm": 1} for k in RPM1_KEYS.values()},
    "models": {
        "alpha": {"skill": 2.0, "answer_words": 20},
        "beta": {"skill": 0.5, "answer_words": 20},
        "gamma": {"skill": -1.0, "answer_words": 20},
        # Long answers: a review prompt passes the providers' 1,024-token cache minimum.
        "long_a": {"skill": 1.0, "answer_words": 900},
        "long_b": {"skill": 0.0, "answer_words": 900},
        "long_c": {"skill": -1.0, "answer_words": 900},
        # Slow versions for the kill -9 test (the run must last long enough to interrupt).
        "slow_a": {"skill": 1.0, "answer_words": 20, "latency_mean": 0.05},
        "slow_b": {"skill": 0.0, "answer_words": 20, "latency_mean": 0.05},
        "slow_c": {"skill": -1.0, "answer_words": 20, "latency_mean": 0.05},
        "f500": {"faults": {"error_500": 1.0}},
        "f503": {"faults": {"error_503": 1.0}},
        "f529": {"faults": {"error_529": 1.0}},
        "fdrop": {"faults": {"drop": 1.0}},
        "fhang": {"faults": {"hang": 1.0}},
        "fslow": {"faults": {"slow": 1.0, "slow_seconds": 0.3}},
        "fmalformed": {"faults": {"malformed": 1.0}},
        "fempty": {"faults": {"empty": 1.0}},
        "frl": {"faults": {"rate_limit": 1.0, "retry_after": 2.5}},
        "frl_once": {"faults": {"rate_limit": 1.0, "retry_after": 0.3, "recover_after": 1}},
        "f503_twice": {"faults": {"error_503": 1.0, "recover_after": 2}},
        "fquota": {"faults": {"rate_limit": 1.0, "retry_after": 7200}},
    },
}


@pytest.fixture(scope="session")
def server() -> Iterator[FakeServer]:
    """The fake server on a free port, for the whole test session."""
    with FakeServer(FakeServerConfig.model_validate(SERVER_CONFIG)) as s:
        yield s


def base_url(server: FakeServer, provider_type: str) -> str:
    """The base_url a provider type uses to reach the fake server."""
    return server.url + "/v1" if provider_type == "openai" else server.url


def make_provider(
    server: FakeServer,
    provider_type: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    key: str | None = None,
    timeout: float = 5.0,
) -> Provider:
    """A provider of `provider_type` pointed at the fake server, its key in the env."""
    env = KEY_ENV[provider_type]
    monkeypatch.setenv(env, key if key is not None else KEYS[provider_type])
    config = ProviderConfig(
        type=provider_type,
        base_url=base_url(server, provider_type),
        api_key_env=env,
        timeout=timeout,
    )
    return create_provider(f"p_{provider_type}", config, {}, 0)


def write_tournament(
    root: Path,
    server: FakeServer,
    *,
    models: dict[str, str] | None = None,
    providers: dict[str, dict[str, Any]] | None = None,
    questions: int = 3,
    extra: dict[str, Any] | None = None,
) -> Path:
    """A tournament over the fake server: one contestant per provider type by default."""
    (root / "q.jsonl").write_text(
        "\n".join(
            json.dumps({"id": f"q{i}", "text": f"HTTP question number {i}?"})
            for i in range(questions)
        )
        + "\n"
    )
    providers = providers or {
        f"p_{t}": {
            "type": t,
            "base_url": base_url(server, t),
            "api_key_env": KEY_ENV[t],
            "limits": {"max_concurrency": 4},
            "timeout": 5,
        }
        for t in TYPES
    }
    models = models or {"alpha": "p_openai", "beta": "p_anthropic", "gamma": "p_gemini"}
    cfg: dict[str, Any] = {
        "name": "http",
        "seed": 2,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": providers,
        "models": {name: {"provider": p, "max_tokens": 200} for name, p in models.items()},
        "contestants": list(models),
        "review": {"max_tokens": 200},
        "retry": {"max_attempts": 3, "backoff_base": 0.01, "backoff_max": 0.05},
    }
    cfg.update(extra or {})
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def set_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every provider type's key in the environment."""
    for t in TYPES:
        monkeypatch.setenv(KEY_ENV[t], KEYS[t])


class FakeClock:
    """Moves the server's clock forward in the background (jobs progress, nobody waits)."""

    def __init__(self, server: FakeServer, step: float) -> None:
        self.url, self.step = server.url + "/fake/clock", step
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.02):
            body = json.dumps({"advance": self.step}).encode()
            req = urllib.request.Request(
                self.url, body, headers={"Content-Type": "application/json"}
            )
            urllib.request.urlopen(req, timeout=5).read()

    def __enter__(self) -> FakeClock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
