"""The one error of the formats package."""

from __future__ import annotations

from pathlib import Path

from arena.errors import ArenaInputError


class FormatError(ArenaInputError):
    """A file that cannot be read as it should: names the file, the place and the problem."""

    def __init__(self, file: str | Path, where: str, problem: str) -> None:
        self.file = str(file)
        self.where = where
        self.problem = problem
        place = f"{self.file}: {where}" if where else self.file
        super().__init__(f"{place}: {problem}")
