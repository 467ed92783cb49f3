"""The one registry of provider types (arena.providers creates the instances)."""

from __future__ import annotations

# type name -> "module:attribute", imported lazily by `arena.providers` so a
# missing optional SDK only matters when a tournament uses that provider type.
_PROVIDER_TYPES: dict[str, str] = {
    "sim": "arena.providers.sim:SimProvider",
    "openai": "arena.providers.openai:OpenAIProvider",
    "anthropic": "arena.providers.anthropic:AnthropicProvider",
    "gemini": "arena.providers.gemini:GeminiProvider",
    "replay": "arena.providers.replay:ReplayProvider",
}
SIM_TYPE = "sim"  # the simulator: the only type whose models take a `sim:` block
REPLAY_TYPE = "replay"  # answers review requests with recorded judgments (arena.providers.replay)


def register_provider_type(type_name: str, target: str) -> None:
    """Make `type_name` a valid provider type, served by 'module:ClassName'."""
    _PROVIDER_TYPES[type_name] = target


def provider_target(type_name: str) -> str | None:
    """The 'module:ClassName' registered for a provider type (None when unknown)."""
    return _PROVIDER_TYPES.get(type_name)


def provider_type_names() -> list[str]:
    """Every registered provider type, sorted."""
    return sorted(_PROVIDER_TYPES)


# Provider types whose calls cost nothing (no price needed).
FREE_TYPES = frozenset({SIM_TYPE, REPLAY_TYPE})
# The `provider` of a contestant whose answers come from a file (logs, plan, status).
FILE_PROVIDER = "(file)"
