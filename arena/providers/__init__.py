"""Providers: one small class per API, registered by type name."""

from arena.providers._base import (
    Provider,
    ProviderUnavailable,
    create_provider,
    provider_types,
    register_provider,
)

__all__ = [
    "Provider",
    "ProviderUnavailable",
    "create_provider",
    "provider_types",
    "register_provider",
]
