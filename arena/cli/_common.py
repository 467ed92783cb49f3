"""Shared pieces of the CLI: exit codes and error reporting."""

from __future__ import annotations

import sys
from enum import IntEnum
from pathlib import Path
from typing import NoReturn

import click

from arena.config import ConfigError, Tournament, load_tournament


class Exit(IntEnum):
    """Process exit codes, the same for every command (see README)."""

    OK = 0
    ERROR = 1
    BAD_INPUT = 2
    PARTIAL = 3
    BUDGET = 4
    LOCKED = 75
    SIGINT = 130
    SIGTERM = 143


def fail(message: str, code: Exit = Exit.BAD_INPUT) -> NoReturn:
    """Print an error on stderr and exit with the code."""
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(int(code))


def load_or_exit(file: Path, out: Path | None = None) -> Tournament:
    """Load a tournament YAML or exit 2 naming the file, key and problem."""
    try:
        return load_tournament(file, out)
    except ConfigError as exc:
        fail(str(exc))
