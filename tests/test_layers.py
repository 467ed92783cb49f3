"""The import layering of docs/DESIGN.md: no import from a lower layer up, no cycle.

Every `import arena.X` and `from arena.X import ...` of every module under
arena/ is read with `ast`: imports inside functions and those under
`if TYPE_CHECKING:` included (a type a module names is a dependency too). The
package root `arena` is a facade that loads its names on first use, importable
from anywhere.

Two rules: no import goes from a lower layer up (or sideways, between two
units of one layer), and no two files import each other, directly or
through others (a package's `__init__` counts as a file).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import arena

ROOT = Path(arena.__file__).resolve().parent

# Lowest first; a unit (a top-level module or package of arena) imports only
# from its own layer's unit or from lower layers. Units of one layer do not
# import each other.
LAYERS: list[set[str]] = [
    {"types", "progress", "errors", "lazy", "runtime"},
    {"formats", "store", "rank"},
    {"config"},
    {"shard", "review"},
    {"examples"},
    {"providers"},
    {"scheduler", "fakeserver"},
    {"runner"},
    {"session"},
    {"pipeline"},
    {"stage"},
    {"sampling", "discuss", "batcheval"},
    {"stages"},
    {"rundir"},
    {"ops"},
    {"nightly"},  # the deprecated alias of rundir and ops
    {"estimate", "report"},
    {"viewer"},
    {"htmlreport", "engine"},
    {"cli"},
    {"api", "__main__"},
]
STAGE_PACKAGES = {"sampling", "discuss", "batcheval"}
# Modules outside a stage's package that import it directly: none (the
# leaderboard's blocks and the commands go through the registry).
NAMES_A_STAGE: set[str] = set()


def _module_name(path: Path) -> str:
    parts = ("arena", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 3 and parts[1] in STAGE_PACKAGES and parts[2] == "_cli":
        return "cli"  # a stage's own command, registered in arena.stages: the cli layer
    return parts[1] if len(parts) > 1 else "arena"


def _resolve(module: str, name: str) -> str:
    """`from module import name`: the submodule `module.name` when it is a file of arena."""
    candidate = f"{module}.{name}"
    path = ROOT.joinpath(*candidate.split(".")[1:])
    return candidate if path.with_suffix(".py").is_file() or path.is_dir() else module


@cache
def _imports() -> dict[str, set[str]]:
    """Module -> the arena modules it imports (anywhere in the file). Read once per
    session: the tests only read it."""
    out: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        me = _module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package of this file
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, *([base] if base else [])])
                found.update(_resolve(base, a.name) for a in node.names)
        out[me] = {m for m in found if (m == "arena" or m.startswith("arena.")) and m != me}
    return out


def test_every_unit_has_a_layer() -> None:
    units = {_unit(m) for m in _imports()} - {"arena"}
    placed = set().union(*LAYERS)
    assert units == placed


def test_no_import_goes_up_or_sideways() -> None:
    layer = {unit: k for k, units in enumerate(LAYERS) for unit in units}
    wrong = []
    for module, imported in _imports().items():
        mine = _unit(module)
        for target in imported:
            theirs = _unit(target)
            if "arena" in (mine, theirs) or theirs == mine:
                continue
            if layer[theirs] >= layer[mine]:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (its nodes in order, the first again at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def _files_graph() -> dict[str, set[str]]:
    modules = _imports()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, imported in modules.items():
        targets = set()
        for target in imported:
            while target not in known and "." in target:  # a name of a module: the module
                target = target.rpartition(".")[0]
            if target != module and target != "arena":
                targets.add(target)
        graph[module] = targets
    return graph


def test_no_cycle_between_files() -> None:
    cycle = _cycle(_files_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle_through_a_function_local_import() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_only_the_cli_imports_the_cli() -> None:
    """The library never calls its command line: only `arena/cli/`, the stages' own
    `_cli.py` commands and `python -m arena` import `arena.cli`."""
    outside = sorted(
        module
        for module, imported in _imports().items()
        if any(t == "arena.cli" or t.startswith("arena.cli.") for t in imported)
        and _unit(module) != "cli"
        and module != "arena.__main__"
    )
    assert outside == []


def test_no_cycle_between_units() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, imported in _imports().items():
        for target in imported:
            if "arena" not in (_unit(module), _unit(target)) and _unit(target) != _unit(module):
                graph[_unit(module)].add(_unit(target))
    state: dict[str, int] = {}

    def visit(unit: str, path: list[str]) -> None:
        state[unit] = 1
        for nxt in sorted(graph[unit]):
            assert state.get(nxt) != 1, " -> ".join([*path, unit, nxt])
            if nxt not in state:
                visit(nxt, [*path, unit])
        state[unit] = 2

    for unit in sorted(graph):
        if unit not in state:
            visit(unit, [])


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "arena"


def test_only_the_registry_names_the_stage_packages() -> None:
    # Outside its own package (its `_cli` command included), no module imports a stage.
    naming = {
        module
        for module, imported in _imports().items()
        if any(_package(t) in STAGE_PACKAGES and _package(t) != _package(module) for t in imported)
    }
    assert naming == NAMES_A_STAGE
    registry = (ROOT / "stages.py").read_text(encoding="utf-8")
    assert all(
        f'"arena.{name}._stage:' in registry or f'"arena.{name}._selection:' in registry
        for name in STAGE_PACKAGES
    )
