"""Every arena package and module declares its public names, and exports nothing by accident.

The expected names are built from the code itself: for a package, every public
attribute of its `__init__` (what `from arena.x import *` and readers see);
for a module, every public function, class and constant it defines at top
level. Each must be listed in `__all__`, and each name in `__all__` must exist.
A new public helper that is not meant to be public gets a leading underscore.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import types
from pathlib import Path

import pytest

import arena

ROOT = Path(arena.__file__).parent


def _modules() -> list[str]:
    names = ["arena"]
    for info in pkgutil.walk_packages([str(ROOT)], prefix="arena."):
        last = info.name.rsplit(".", 1)[-1]
        if last == "__main__" or (last.startswith("_") and not info.ispkg):
            continue
        names.append(info.name)
    return names


def _defined_names(path: Path) -> set[str]:
    """Public names a module defines at top level (not the ones it imports)."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return {n for n in out if not n.startswith("_")}


@pytest.mark.parametrize("name", _modules())
def test_public_names_are_declared(name: str) -> None:
    module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{name} has no __all__"
    assert len(declared) == len(set(declared)), f"{name}.__all__ repeats a name"
    missing = [n for n in declared if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names it lacks: {missing}"
    path = Path(module.__file__ or "")
    if path.name == "__init__.py":
        public = {
            k
            for k, v in vars(module).items()
            if not k.startswith("_")
            and not isinstance(v, types.ModuleType)
            and k not in {"annotations", "TYPE_CHECKING"}
            # Helpers imported from the standard library or third parties
            # (typing.Any, pathlib.Path) are not arena's names.
            and str(getattr(v, "__module__", None) or "arena").startswith("arena")
        }
    else:
        public = _defined_names(path)
    undeclared = sorted(public - set(declared))
    assert not undeclared, f"{name} exports names missing from __all__: {undeclared}"
