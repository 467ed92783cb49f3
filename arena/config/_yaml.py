"""Reading a YAML file safely: unique keys, bounded size, depth and alias expansion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from arena.config._errors import ConfigError

# bytes, how deep its collections nest, and how many values it holds once
# every alias is expanded (a "billion laughs" file of 1 KB expands to 10^9).
MAX_YAML_BYTES = 512 * 1024
# The longest file or folder name (bytes) the usual file systems allow.
NAME_MAX = 255
MAX_YAML_DEPTH = 100
MAX_YAML_VALUES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that rejects duplicate keys (duplicate model names etc.) and bounds
    nesting depth (the composer recurses once per level)."""

    _depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
        # `[[[[...` is refused while scanning: the scanner slows down with every open level.
        if self.flow_level >= MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", self.get_mark()
            )
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _AliasCycle(Exception):
    """An alias inside the value it names (`&a [*a]`): it would expand forever."""

    def __init__(self, mark: Any) -> None:
        super().__init__(mark)
        self.mark = mark


def _expanded_size(root: yaml.Node) -> int:
    """How many values the document holds with every alias expanded (no recursion: the
    node graph is walked once, each shared node's size computed once)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered, not yet sized: met again below itself = a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done:
            if id(node) in open_nodes:
                raise _AliasCycle(node.start_mark)
            open_nodes.add(id(node))
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}'", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node)
    return mapping


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def key_line(path: Path, loc: tuple[Any, ...]) -> int | None:
    """The line (1-based) of the key path `loc` (as pydantic gives it) in a YAML file
    `read_yaml` read; the deepest part of it found, None when the file cannot say."""
    try:
        text = path.read_bytes()[:MAX_YAML_BYTES].decode("utf-8")
        loader = _UniqueKeyLoader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except Exception:  # noqa: BLE001 - only a better message is lost
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = next((pair for pair in node.value if pair[0].value == str(part)), None)
            if found is None:
                break
            line = found[0].start_mark.line + 1
            node = found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def read_yaml(path: Path) -> Any:
    """Read a YAML file, turning syntax errors into ConfigError."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_YAML_BYTES + 1)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(
            path,
            "",
            f"larger than {MAX_YAML_BYTES // 1024} KiB, the most a YAML of settings may be",
        )
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node)
        if size > MAX_YAML_VALUES:
            raise ConfigError(
                path,
                "",
                f"holds more than {MAX_YAML_VALUES:,} values once its aliases (*name) are "
                "expanded: write the values out, or use fewer nested aliases",
            )
        return loader.construct_document(node)
    except _AliasCycle as exc:
        where = f"line {exc.mark.line + 1}, column {exc.mark.column + 1}"
        raise ConfigError(path, where, "an alias inside the value it names") from None
    except RecursionError:
        raise ConfigError(path, "", f"nested deeper than {MAX_YAML_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "syntax"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(path, where, f"invalid YAML: {problem}") from None
    finally:
        loader.dispose()
