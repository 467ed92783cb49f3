"""Package names loaded on first use (PEP 562).

A package whose public names live in its modules lists them once (name ->
module) and gets the module-level `__getattr__` and `__dir__` from here, so
that importing the package (to register its log table, say) loads none of
those modules until a name is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, namespace: MutableMapping[str, Any], names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose globals are `namespace`.

    A name of `names` is imported from its module on first use and kept in
    `namespace`, so later lookups do not come back here; any other name is an
    AttributeError, as for a plain module.
    """

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *names})

    return getattr_, dir_
