"""`arena --help` imports no command module and no heavy library (lazy imports)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from arena.cli import COMMANDS, SUMMARIES, main

HEAVY = ("polars", "pyarrow", "pydantic", "numpy", "yaml", "arena.config", "arena.store")


def test_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from arena.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('arena.cli._') "
        "and m != 'arena.cli._exit'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-2:] == ["[]", "[]"]


def test_help_lists_every_command_with_its_own_summary() -> None:
    text = CliRunner().invoke(main, ["--help"]).output
    ctx = click.Context(main)
    for name, target in COMMANDS.items():
        assert name in text
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert " ".join((command.help or "").split()).startswith(SUMMARIES[name]), name
        assert main.get_command(ctx, name) is command


def test_package_attributes_load_on_first_use() -> None:
    import arena
    import arena.config

    assert arena.load_tournament is arena.config.load_tournament
    assert issubclass(arena.ConfigError, Exception)
