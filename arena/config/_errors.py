"""`ConfigError`: bad input, naming the file, the key path and the problem."""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaConfigError


class ConfigError(ArenaConfigError):
    """Bad input: names the file, the key path and the problem."""

    def __init__(self, file: str | Path, key: str, problem: str) -> None:
        self.file = str(file)
        self.key = key
        self.problem = problem
        where = f"{self.file}: {key}" if key else self.file
        super().__init__(f"{where}: {problem}")
