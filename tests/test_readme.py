"""The README's tournament YAML reference is a valid tournament."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from arena.config import parse_config

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
