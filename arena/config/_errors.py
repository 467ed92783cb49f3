"""`ConfigError`: bad input, naming the file, the key path and the problem."""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaConfigError


class ConfigError(ArenaConfigError):
    """Bad input: names the file, the key path and the problem."""

    def __init__(self, file: str | Path, key: str, problem: str, line: int | None = None) -> None:
        self.file = str(file)
        self.key = key
        self.problem = problem
        self.line = line  # the key's line in the file, when known
        where = f"{self.file}: {key}" if key else self.file
        at = "" if line is None else f" (line {line})"
        super().__init__(f"{where}: {problem}{at}")
