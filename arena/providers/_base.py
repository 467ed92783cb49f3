"""The provider interface and the registry of provider types."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import ClassVar

from arena.config import (
    ModelConfig,
    ProviderConfig,
    Tournament,
    provider_target,
    provider_type_names,
    register_provider_type,
)
from arena.errors import ArenaProviderError
from arena.types import GenerateRequest, GenerateResult


class Provider(ABC):
    """Translates one completion request to a provider's API and back.

    A subclass must implement `generate`, which performs exactly one attempt
    and either returns a `GenerateResult` or raises `arena.types.ProviderError`
    with the failure classified (rate limit with its retry hint, transient,
    permanent, auth). A subclass must never sleep, retry or enforce limits:
    the scheduler's governor does all waiting, in one place, for every
    provider. A subclass may assume that `generate` is only called while the
    governor admits the call, and that `close` is called once at the end.

    A subclass whose calls go to a server that enforces its own limits sets
    `over_network = True` (the SDK providers do). The governor then runs the
    first attempt alone and admits the rest once it has an answer (a wrong key
    costs one request; calls admitted while a cold SDK client starts up do not
    reach the API at once), and keeps bursts to half a second of the
    configured rates, so that delivery jitter cannot overdraw the server's
    own (about one second) bucket.
    """

    over_network: ClassVar[bool] = False

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        self.name = name
        self.config = config
        self.models = dict(models)  # provider-side model id -> its config
        self.seed = seed

    @abstractmethod
    async def generate(self, request: GenerateRequest) -> GenerateResult:
        """Perform one attempt of one completion."""

    async def close(self) -> None:
        """Release network clients (default: nothing to release)."""
        return None

    def check_ready(self) -> list[str]:
        """Problems that make this provider unusable (missing key...), before any call."""
        return []

    def bind(self, tournament: Tournament) -> None:
        """Learn the tournament it serves before its first call (default: nothing to learn).

        The replay provider reads the questions and the answer files here, to
        tell which battle a review request shows.
        """
        return None


ProviderFactory = Callable[[str, ProviderConfig, Mapping[str, ModelConfig], int], Provider]

# The registry of provider types (type name -> "module:attribute") lives in
# `arena.config`, so the YAML accepts every registered type; the module is
# imported lazily, so a missing optional SDK only matters when a tournament
# uses that provider type.
_EXTRA_HINT: dict[str, str] = {
    "openai": "pip install 'arena[providers]' (or: pip install openai)",
    "anthropic": "pip install 'arena[providers]' (or: pip install anthropic)",
    "gemini": "pip install 'arena[providers]' (or: pip install google-genai)",
}


def register_provider(type_name: str, target: str, install_hint: str | None = None) -> None:
    """Register a provider type as 'module:ClassName' (imported on first use).

    Tournament YAML accepts the type from then on.
    """
    register_provider_type(type_name, target)
    if install_hint:
        _EXTRA_HINT[type_name] = install_hint


def provider_types() -> list[str]:
    """Names of every registered provider type."""
    return provider_type_names()


class ProviderUnavailable(ArenaProviderError):
    """A provider type is unknown or its SDK is not installed."""


def create_provider(
    name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
) -> Provider:
    """Instantiate the provider registered for `config.type`."""
    target = provider_target(config.type)
    if target is None:
        raise ProviderUnavailable(
            f"providers.{name}.type: unknown provider type '{config.type}' "
            f"(known: {', '.join(provider_types())})"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = _EXTRA_HINT.get(config.type, "pip install 'arena[providers]'")
        raise ProviderUnavailable(
            f"providers.{name}: provider type '{config.type}' needs a missing package "
            f"({exc.name}); install it with: {hint}"
        ) from None
    factory: ProviderFactory = getattr(module, attr)
    return factory(name, config, models, seed)
