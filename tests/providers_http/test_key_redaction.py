"""A key with a control character never shows up in an error message, in any escaped form."""

from __future__ import annotations

import asyncio

import pytest

from arena.fakeserver import FakeServer
from arena.providers import Provider
from arena.types import GenerateRequest, Message, ProviderError
from tests.providers_http.conftest import make_provider

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

# The HTTP library refuses the header and quotes it escaped: b'Bearer sk-..\n..'.
KEY = "sk-LEAK-first-half\nLEAK-second-half"


def _error(provider: Provider) -> ProviderError:
    async def run() -> ProviderError:
        try:
            await provider.generate(
                GenerateRequest(model="alpha", messages=(Message("user", "hi"),))
            )
        except ProviderError as exc:
            return exc
        finally:
            await provider.close()
        raise AssertionError("the call succeeded")

    return asyncio.run(run())


@pytest.mark.parametrize("ptype", ["openai", "anthropic", "gemini"])
def test_key_with_a_newline_is_redacted(
    ptype: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = _error(make_provider(server, ptype, monkeypatch, key=KEY))
    text = f"{err} {err.args!r}"
    assert "LEAK" not in text, text


def test_redact_covers_escaped_forms(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = make_provider(server, "openai", monkeypatch, key="sk-a\tb\u00e9c")
    from arena.providers._remote import RemoteProvider

    assert isinstance(provider, RemoteProvider)
    for leaked in ("sk-a\tb\u00e9c", "sk-a\\tb\\xe9c", "sk-a\\tb\\xc3\\xa9c"):
        assert provider.redact(f"header {leaked}!") == "header [redacted]!"
