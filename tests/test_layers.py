"""The import layering of docs/DESIGN.md: no import from a lower layer up, no cycle.

Every `import arena.X` and `from arena.X import ...` of every module under
arena/ is read with `ast` (imports inside functions included, those under
`if TYPE_CHECKING:` left out: they never run). The package root `arena` is a
facade that loads its names on first use, importable from anywhere.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import arena

ROOT = Path(arena.__file__).resolve().parent

# Lowest first; a unit (a top-level module or package of arena) imports only
# from its own layer's unit or from lower layers. Units of one layer do not
# import each other.
LAYERS: list[set[str]] = [
    {"types", "progress", "errors", "lazy", "memory"},
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
    {"nightly"},
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


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports() -> dict[str, set[str]]:
    """Module -> the arena modules it imports (at run time)."""
    out: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
        out[_module_name(path)] = {m for m in found if m == "arena" or m.startswith("arena.")}
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
