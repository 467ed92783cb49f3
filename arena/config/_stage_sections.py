"""The YAML sections that stages declare in their own packages (`arena.stage.Part.section`).

The schema's own fields hold the sections of the stages that ship with arena
(`discussion:`, `batcheval:`, `sampling:`). A stage in a package of its own
declares a `StageSection`: its top-level key, its pydantic model and its
checks past the schema; `arena.stages` registers it here when it loads the
stage. `parse_config` validates each registered section present in a
document, with the same error format as the schema's own, and the
`TournamentConfig` keeps it (`cfg.section(key)`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from arena.config._schema import TournamentConfig

__all__ = ["StageSection", "load_stage_sections", "register_section", "registered_section"]


@dataclass(frozen=True)
class StageSection:
    """A stage's top-level YAML section: `key`, its `schema` and its checks past the schema.

    `check(cfg, section, file)` raises `ConfigError` (naming `key.field`) for a
    problem the schema cannot see, such as a model the tournament does not
    define.
    """

    key: str
    schema: type[BaseModel]
    check: Callable[[TournamentConfig, Any, str | Path], None] | None = None


_SECTIONS: dict[str, StageSection] = {}


def register_section(section: StageSection) -> None:
    """Make `section.key` a valid top-level key of a tournament YAML."""
    from arena.config._schema import TournamentConfig

    if section.key in TournamentConfig.model_fields:
        raise ValueError(f"section {section.key!r} is already a key of the tournament schema")
    known = _SECTIONS.get(section.key)
    if known is not None and known != section:
        raise ValueError(f"section {section.key!r} is already registered by another stage")
    _SECTIONS[section.key] = section


def registered_section(key: str) -> StageSection | None:
    """The section registered under a top-level key (None: no stage declares it)."""
    return _SECTIONS.get(key)


def load_stage_sections() -> None:
    """Load the registry of parts (`arena.stages`), which registers their sections.

    Called only for a document with a top-level key that neither the schema
    nor a registered section knows: the stages load on first use, so a stage
    listed in the registry may not have declared its section yet.
    """
    importlib.import_module("arena.stages").all_parts()
