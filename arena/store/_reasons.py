"""Why calls failed: logged failures grouped by provider, model and reason."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

__all__ = ["failure_reason", "failure_reasons", "merge_reasons"]

# "provider NAME: " as the scheduler prefixes provider-wide stops.
_PROVIDER_PREFIX = re.compile(r"^provider \S+: ")
SAMPLE_CHARS = 300


def failure_reason(error: str | None) -> str:
    """The reason of one error message: what comes before its details.

    `ProviderError` messages read "KIND (HTTP STATUS): details", so the reason
    is e.g. "permanent (HTTP 404)" or "transient"; the scheduler's own stops
    read "provider NAME: authentication failed: ..." ("authentication failed").
    """
    if not error:
        return "unknown"
    text = _PROVIDER_PREFIX.sub("", error.strip())
    head, sep, _ = text.partition(": ")
    return head if sep else text[:80]


def failure_reasons(frame: pl.DataFrame, model_column: str) -> list[dict[str, Any]]:
    """Failed rows of a call table as {provider, model, reason, count, sample}, most first."""
    if frame.is_empty() or model_column not in frame.columns:
        return []
    failed = frame.filter(pl.col("status") == "failed")
    if failed.is_empty():
        return []
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for provider, model, error in failed.select("provider", model_column, "error").iter_rows():
        key = (str(provider), str(model), failure_reason(error))
        entry = groups.get(key)
        if entry is None:
            sample = (error or "")[:SAMPLE_CHARS]
            groups[key] = {
                "provider": key[0],
                "model": key[1],
                "reason": key[2],
                "count": 1,
                "sample": sample,
            }
        else:
            entry["count"] += 1
    return sorted(
        groups.values(), key=lambda e: (-e["count"], e["provider"], e["model"], e["reason"])
    )


def merge_reasons(*lists: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Several reason lists as one, counts of the same (provider, model, reason) added."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entries in lists:
        for entry in entries:
            key = (str(entry["provider"]), str(entry["model"]), str(entry["reason"]))
            if key in groups:
                groups[key]["count"] += int(entry["count"])
            else:
                groups[key] = dict(entry)
    return sorted(
        groups.values(), key=lambda e: (-e["count"], e["provider"], e["model"], e["reason"])
    )
