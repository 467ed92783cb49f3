"""Which jobs a provider entry can adopt: a digest of its API type, endpoint and key."""

from __future__ import annotations

import pytest

from arena.config import ProviderConfig
from arena.providers import create_provider
from arena.providers._batch import BatchClient, account_digest

KEY = "sk-test-5f1e2d3c4b5a69788796a5b4c3d2e1f0"


def _client(
    monkeypatch: pytest.MonkeyPatch, name: str, api: str, url: str | None, env: str, key: str
) -> BatchClient:
    monkeypatch.setenv(env, key)
    config = ProviderConfig(type=api, base_url=url, api_key_env=env, batch=True)
    client: BatchClient = getattr(create_provider(name, config, {}, 0), "batch_client")()  # noqa: B009
    return client


@pytest.mark.parametrize("api", ["openai", "anthropic", "gemini"])
def test_the_same_endpoint_and_key_is_the_same_account_whatever_the_entry_is_called(
    monkeypatch: pytest.MonkeyPatch, api: str
) -> None:
    a = _client(monkeypatch, "old", api, "http://127.0.0.1:9/v1", "KEY_A", KEY)
    b = _client(monkeypatch, "new", api, "http://127.0.0.1:9/v1/", "KEY_B", KEY)
    assert a.account == b.account != ""
    assert KEY not in a.account and KEY[3:11] not in a.account
    other_key = _client(monkeypatch, "old", api, "http://127.0.0.1:9/v1", "KEY_C", KEY + "x")
    other_url = _client(monkeypatch, "old", api, "http://127.0.0.1:8/v1", "KEY_D", KEY)
    assert len({a.account, other_key.account, other_url.account}) == 3


def test_no_key_no_account() -> None:
    assert account_digest("openai", None, None) == ""
    assert account_digest("openai", None, KEY) != account_digest("anthropic", None, KEY)
