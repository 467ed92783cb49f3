"""Review templates with variants: `{variant: NAME}` lines split one file into a
template per question category (`general` for the others)."""

from __future__ import annotations

import re

__all__ = ["GENERAL_VARIANT", "REVIEW_PLACEHOLDERS", "template_variants", "unknown_placeholders"]

_VARIANT_RE = re.compile(r"^\{variant:\s*([^}\n]+?)\s*\}[ \t]*\n?", re.MULTILINE)
GENERAL_VARIANT = "general"
# What a review prompt fills in (arena-hard's judge prompt writes the first four in
# capitals); any other `{name}` would reach the reviewer as written.
REVIEW_PLACEHOLDERS = frozenset(
    {"question", "answer_a", "answer_b", "reference", "examples"}
    | {"QUESTION", "ANSWER_A", "ANSWER_B", "REFERENCE"}
)
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def unknown_placeholders(template: str) -> list[str]:
    """The `{name}` placeholders of a review template that rendering does not fill, sorted."""
    return sorted(set(_PLACEHOLDER_RE.findall(template)) - REVIEW_PLACEHOLDERS)


def template_variants(template: str) -> dict[str, str] | None:
    """A template's variants by (lower-case) category name; None for a plain template.

    ValueError when a variant template has text before its first variant line,
    names a category twice, or lacks the `general` variant.
    """
    heads = list(_VARIANT_RE.finditer(template))
    if not heads:
        return None
    if template[: heads[0].start()].strip():
        raise ValueError("text before the first {variant: ...} line")
    out: dict[str, str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(template)
        body = template[head.end() : end]
        for name in (n.strip().lower() for n in head.group(1).split(",")):
            if not name:
                raise ValueError(f"empty category name in {head.group(0).strip()}")
            if name in out:
                raise ValueError(f"category '{name}' has two variants")
            out[name] = body
    if GENERAL_VARIANT not in out:
        raise ValueError("no {variant: general} (for other categories)")
    return out
