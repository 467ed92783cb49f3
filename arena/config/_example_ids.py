"""How the `examples:` section's `select` and `ids` fit together (checked when the config loads)."""

from __future__ import annotations

__all__ = ["check_example_ids"]


def check_example_ids(select: str, ids: list[str] | None, k: int, k_given: bool) -> None:
    """ValueError unless `ids` goes with `select: fixed` (and only with it).

    `select: fixed` shows the hand-picked items `ids` lists, so it needs them; a
    `k` given beside them must be their number. The seeded random pick is
    `select: seeded` (the default), and `retrieved` chooses by similarity: both
    choose their own items and take no `ids`.
    """
    if select == "fixed":
        if not ids:
            raise ValueError(
                "select: fixed shows hand-picked items: list their pool ids in `ids` "
                "(the seeded random pick is `select: seeded`)"
            )
        if len(set(ids)) != len(ids):
            raise ValueError("ids: an id is listed twice")
        if k_given and k != len(ids):
            raise ValueError(
                f"k is {k} but ids lists {len(ids)} item(s): with select: fixed, leave k out "
                "(every listed item is shown)"
            )
    elif ids is not None:
        raise ValueError(f"ids goes with select: fixed, not select: {select}")
