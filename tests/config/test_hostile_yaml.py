"""Hostile or mistaken YAML and question files: exit 2 naming file, field and problem, no
traceback, before anything is written (alias bombs, deep nesting, long names, odd values)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from arena.config import MAX_YAML_DEPTH, ConfigError, load_tournament, read_yaml
from tests.conftest import small_tournament
from tests.rundir._support import cli


def _bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" mapping: `width ** levels` strings from a few hundred bytes."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join("      " + line for line in lines) + "\n"


def _insert_under_m0(path: Path, block: str) -> None:
    text = path.read_text()
    assert "  m0:\n" in text
    path.write_text(text.replace("  m0:\n", "  m0:\n    extra:\n" + block, 1))


def test_an_alias_bomb_is_refused_fast_and_small(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    _insert_under_m0(path, _bomb())
    assert path.stat().st_size < 2000
    # Refused from the node graph, before any value is built (before: 70 s and 4.6 GB
    # once the run validated and hashed the expanded values).
    with pytest.raises(ConfigError, match=r"t\.yaml: holds more than 100,000 values"):
        read_yaml(path)
    result = cli("run", str(path))
    assert result.exit_code == 2, result.output
    assert "holds more than 100,000 values once its aliases" in result.output
    assert not (tmp_path / "out").exists()


def test_a_few_aliases_still_work(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    _insert_under_m0(path, _bomb(levels=3, width=3))
    t = load_tournament(path)
    assert t.config.models["m0"].extra["a2"] == [[["lol"] * 3] * 3] * 3


def test_an_alias_inside_its_own_value_is_refused(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    _insert_under_m0(path, "      loop: &loop [1, *loop]\n")
    with pytest.raises(ConfigError, match="an alias inside the value it names"):
        load_tournament(path)


@pytest.mark.parametrize("flow", [True, False])
def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path, flow: bool) -> None:
    path = small_tournament(tmp_path)
    if flow:
        deep = "[" * 5000 + "]" * 5000
    else:  # block style: one indentation level per list
        deep = "".join("\n" + "  " * (i + 1) + "-" for i in range(MAX_YAML_DEPTH + 5)) + " x"
    path.write_text(path.read_text() + f"deep: {deep}\n")
    result = cli("run", str(path))
    assert result.exit_code == 2, result.output
    assert f"invalid YAML: nested deeper than {MAX_YAML_DEPTH} levels" in result.output
    assert not (tmp_path / "out").exists()


def test_an_oversized_yaml_is_refused(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    path.write_text(path.read_text() + "# " + "x" * (600 * 1024) + "\n")
    result = cli("plan", str(path))
    assert result.exit_code == 2
    assert "t.yaml: larger than 512 KiB" in result.output


def test_a_name_too_long_for_a_folder(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    cfg = yaml.safe_load(path.read_text())
    cfg["name"] = "n" * 300
    del cfg["output"]  # runs/<name>
    path.write_text(yaml.safe_dump(cfg))
    result = cli("run", str(path))
    assert result.exit_code == 2, result.output
    assert "t.yaml: name: the output directory runs/nnn" in result.output
    assert "300 bytes; a file system allows 255" in result.output
    # With an output directory of its own the long name is fine.
    assert load_tournament(path, tmp_path / "short").name == "n" * 300
    result = cli("run", str(path), "--out", str(tmp_path / ("o" * 256)))
    assert result.exit_code == 2 and "--out: the output directory" in result.output


@pytest.mark.parametrize("where", ["models.m0", "review", "models.m0.review"])
def test_max_tokens_beyond_any_model_is_refused(tmp_path: Path, where: str) -> None:
    path = small_tournament(tmp_path)
    cfg = yaml.safe_load(path.read_text())
    section = cfg
    for key in where.split("."):
        section = section.setdefault(key, {})
    section["max_tokens"] = 10**21
    path.write_text(yaml.safe_dump(cfg))
    result = cli("plan", str(path))
    assert result.exit_code == 2
    assert f"t.yaml: {where}.max_tokens: Input should be less than or equal to 1000000" in (
        result.output
    )


@pytest.mark.parametrize(("value", "kind"), [({"a": 1}, "an object"), (["a", "b"], "a list")])
def test_a_category_that_is_not_a_name_is_refused(tmp_path: Path, value: object, kind: str) -> None:
    path = small_tournament(tmp_path)
    rows: list[dict[str, object]] = [
        {"id": "q0", "text": "Q?", "category": "math"},
        {"id": "q1", "text": "Q?", "category": value},
    ]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = cli("run", str(path))
    assert result.exit_code == 2, result.output
    assert f"q.jsonl: line 2: category: must be a string or a number, not {kind}" in result.output
    rows[1]["category"] = 7
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert [q.category for q in load_tournament(path).questions] == ["math", "7"]
