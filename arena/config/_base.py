"""What every schema module shares: the strict base model, token bound, safe names."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

# The most output tokens a call may ask for: far above any model's limit (a
# typo such as 1e21 is refused, not sent to a provider or priced).
MAX_TOKENS = 1_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def path_safe_name(name: str) -> str:
    """`name` if it can name a file or folder without leaving its parent; else ValueError."""
    if name.strip() in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise ValueError(
            "must not be empty, '.' or '..', nor contain '/', '\\' or NUL "
            "(it names a folder or file and must stay inside its directory)"
        )
    return name


def resolve_relative(yaml_path: Path, value: str) -> Path:
    """A path the YAML names: absolute as given, else relative to the YAML's folder."""
    p = Path(value)
    return p if p.is_absolute() else yaml_path.parent / p
