"""What every schema module shares: the strict base model, token bound, safe names."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

# The most output tokens a call may ask for: far above any model's limit (a
# typo such as 1e21 is refused, not sent to a provider or priced).
MAX_TOKENS = 1_000_000


# Upper bounds that keep a run finite: a value past them is a typo (1e9 rounds, a
# latency of a day), refused before any call rather than waited on.
MAX_ROUNDS = 100  # BatchEval rounds, discussion turns
MAX_SECONDS = 3600.0  # a simulated latency, a timeout, a wait between polls
MAX_ATTEMPTS = 100  # attempts of one call
MAX_ANSWER_WORDS = 10_000  # a simulated answer's typical length (words)
# The slowest rate limit: one request (or token) a minute; below it a run of a few
# hundred calls would take years.
MIN_RATE_PER_MINUTE = 1.0


class _Strict(BaseModel):
    """Every section's base: unknown keys refused, and every number finite (no
    `.nan` or `.inf`, which YAML reads as floats and no setting of arena means)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


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
