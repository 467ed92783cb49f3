"""The README's YAML reference is a valid tournament; every YAML block in README.md and
docs/*.md parses and validates; no doc points outside the repository."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.batcheval import load_setup
from arena.config import ModelConfig, ProviderConfig, parse_config
from arena.fakeserver import FakeServerConfig

README = Path(__file__).resolve().parent.parent / "README.md"


def test_yaml_reference_validates() -> None:
    text = README.read_text()
    block = re.search(r"## Tournament YAML reference\s+```yaml\n(.*?)```", text, re.S)
    assert block is not None
    cfg = parse_config(yaml.safe_load(block.group(1)), README)
    assert cfg.contestants == ["atlas", "boreal"]
    assert cfg.discussion is not None and cfg.batcheval is not None
    assert cfg.retry.max_retry_after == 300


def test_readme_names_every_command() -> None:
    from arena.cli import COMMANDS

    text = README.read_text()
    for name in COMMANDS:
        assert f"`arena {name}" in text, name


ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)

# A valid tournament that section-only blocks are merged into (models the docs name).
BASE: dict[str, Any] = {
    "name": "docs",
    "questions": "q.jsonl",
    "providers": {"sim": {"type": "sim"}},
    "models": {n: {"provider": "sim"} for n in ("atlas", "boreal", "cirrus", "judge", "oracle")},
    "contestants": ["atlas", "boreal", "cirrus"],
    # Two reviewers besides each battle's contestants (discussions exclude those by default).
    "reviewers": ["atlas", "boreal", "cirrus", "judge", "oracle"],
}
_FAKE_SERVER_KEYS = {"faults", "keys", "forbidden_keys", "key_limits", "usage", "rate_headers"}


def _blocks() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text()
        for m in _BLOCK.finditer(text):
            line = text[: m.start()].count("\n") + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", m.group(1)))
    return found


BLOCKS = _blocks()


def test_the_docs_have_yaml_blocks() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(("where", "block"), BLOCKS, ids=[w for w, _ in BLOCKS])
def test_yaml_block_parses_and_validates(where: str, block: str, tmp_path: Path) -> None:
    data = yaml.safe_load(block)
    assert isinstance(data, dict), where
    if _FAKE_SERVER_KEYS & set(data):
        FakeServerConfig.model_validate(data)
    elif "batcheval" in data and "contestants" not in data and "scorers" not in data:
        path = tmp_path / "b.yaml"
        path.write_text(block)
        if "providers" in data:  # a BatchEval file of its own
            load_setup(path)
        else:  # a section: validated inside a tournament
            parse_config({**BASE, **data}, where)
    elif set(data) == {"providers"}:
        for entry in data["providers"].values():
            ProviderConfig.model_validate(entry)
    elif set(data) == {"models"}:
        for entry in data["models"].values():
            ModelConfig.model_validate(entry)
    else:
        merged = {**BASE, **data}
        if "models" in data and "contestants" not in data:
            merged["models"] = {**BASE["models"], **data["models"]}
        parse_config(merged, where)


_OUTSIDE = re.compile(r"\.\./|/work/|(?<![\w/.-])shared/")


def test_no_doc_points_outside_the_repository() -> None:
    for doc in DOCS:
        for lineno, line in enumerate(doc.read_text().splitlines(), 1):
            assert not _OUTSIDE.search(line), f"{doc.name}:{lineno}: {line.strip()}"
