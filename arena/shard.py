"""Splitting one tournament across machines: `arena run t.yaml --shard K/N`.

A call belongs to the shard its question hashes to: every answer, review,
discussion and BatchEval call about question `q` runs in shard
`shard_of(q.id, N)`. Keying on the question keeps each review with the two
answers it needs, so no shard waits for another, no answer is made (and paid
for) twice, and the shards share nothing while they run. The call ids are
those of the unsplit run (they never depend on the shard), so the shard
directories together hold exactly the unsplit run's calls, and `arena
leaderboard DIR1 DIR2 ...` ranks them as one tournament.

The hash is SHA-256 of the question id: the same on every machine and Python
version, and about N-th of the questions each (a shard may be empty when
there are fewer questions than shards).

A shard directory remembers its shard (tournament.json): `arena run` without
`--shard` continues that shard, another `--shard` there is refused, and so is
`--shard` into a directory that holds an unsharded run's calls (`for_directory`,
checked again under the run lock by `check_directory`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.config import ConfigError

if TYPE_CHECKING:
    from arena.config import Question, Tournament

__all__ = [
    "Shard",
    "check_directory",
    "directory_shard",
    "for_directory",
    "has_logged_calls",
    "parse_shard",
    "recorded_shard",
    "shard_of",
    "shard_questions",
    "shard_tournament",
]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K must run from 1 to N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def to_json(self) -> dict[str, Any]:
        """As recorded in the run directory's tournament.json."""
        return {"index": self.index, "count": self.count}

    def holds(self, question_id: str) -> bool:
        """Whether the calls of this question belong to this shard."""
        return shard_of(question_id, self.count) == self.index


def parse_shard(text: str) -> Shard:
    """`"K/N"` (1 <= K <= N) as a Shard; ValueError naming the problem otherwise."""
    match = _SHARD.match(text)
    if match is None:
        raise ValueError(f"shard {text!r}: expected K/N, for example 2/5")
    return Shard(int(match.group(1)), int(match.group(2)))


def shard_of(question_id: str, count: int) -> int:
    """The shard (1..count) that runs the calls about question `question_id`."""
    digest = hashlib.sha256(question_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_questions(questions: tuple[Question, ...], shard: Shard) -> tuple[Question, ...]:
    """The questions whose calls run in `shard`, in their original order."""
    return tuple(q for q in questions if shard.holds(q.id))


def shard_tournament(t: Tournament, shard: Shard) -> Tournament:
    """The tournament restricted to one shard's questions (nothing else changes)."""
    return dataclasses.replace(
        t, questions=shard_questions(t.questions, shard), shard=(shard.index, shard.count)
    )


def recorded_shard(snapshot: dict[str, Any]) -> Shard | None:
    """The shard a run directory's tournament.json records, if any.

    ValueError when the record is there but is not a shard.
    """
    entry = snapshot.get("shard")
    if not isinstance(entry, dict):
        return None
    try:
        return Shard(int(entry["index"]), int(entry["count"]))
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"shard: not a shard record ({exc})") from None


def directory_shard(directory: Path) -> Shard | None:
    """The shard DIR/tournament.json records (None: none, or no such file).

    ConfigError when the file or its shard record cannot be read.
    """
    path = directory / "tournament.json"
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(path, "", f"unreadable: {exc}") from None
    if not isinstance(snapshot, dict):
        raise ConfigError(path, "", "expected a JSON object")
    entry = snapshot.get("shard")
    if entry is not None and not isinstance(entry, dict):
        raise ConfigError(path, "shard", f"not a shard record: {entry!r}")
    try:
        return recorded_shard(snapshot)
    except ValueError as exc:
        raise ConfigError(path, "shard", str(exc)) from None


def has_logged_calls(directory: Path) -> bool:
    """Whether DIR's log holds any row of a call (its history table aside)."""
    log = directory / "log"
    if not log.is_dir():
        return False
    for entry in log.iterdir():
        if entry.name.startswith("history"):
            continue
        if entry.is_dir():
            if any(p.suffix == ".parquet" for p in entry.iterdir()):
                return True
        elif ".journal." in entry.name and entry.stat().st_size > 0:
            return True
    return False


def _unsharded_with_calls(directory: Path, shard: Shard) -> ConfigError:
    return ConfigError(
        directory,
        f"--shard {shard}",
        "this directory holds the calls of an unsharded run: a shard there would re-plan "
        "it to that shard's questions. Run each shard in a directory of its own (--out), "
        "or continue the whole run here without --shard",
    )


def for_directory(t: Tournament, requested: Shard | None) -> Tournament:
    """The tournament to run in `t.output_dir` (`arena run [--shard K/N]`).

    A directory that records shard S runs S: without `--shard` the run
    continues S; another `--shard` raises ConfigError. `--shard` into a
    directory holding an unsharded run's calls raises ConfigError.
    """
    recorded = directory_shard(t.output_dir)
    if recorded is not None:
        if requested is not None and requested != recorded:
            raise ConfigError(
                t.output_dir,
                f"--shard {requested}",
                f"this directory holds shard {recorded} (its tournament.json): run it with "
                f"--shard {recorded} or no --shard, or give shard {requested} a directory "
                "of its own (--out)",
            )
        return shard_tournament(t, recorded)
    if requested is None:
        return t
    if has_logged_calls(t.output_dir):
        raise _unsharded_with_calls(t.output_dir, requested)
    return shard_tournament(t, requested)


def check_directory(t: Tournament) -> None:
    """Refuse to run `t` where its output directory holds another shard (or an unsharded
    run's calls, when `t` is a shard): ConfigError. Called under the run lock, before
    tournament.json is written, so a shard record is never overwritten."""
    recorded = directory_shard(t.output_dir)
    mine = None if t.shard is None else Shard(*t.shard)
    if recorded is not None and mine != recorded:
        raise ConfigError(
            t.output_dir,
            "shard",
            f"this directory holds shard {recorded} (its tournament.json), not "
            + ("the whole tournament" if mine is None else f"shard {mine}")
            + f": run it with --shard {recorded}",
        )
    if recorded is None and mine is not None and has_logged_calls(t.output_dir):
        raise _unsharded_with_calls(t.output_dir, mine)
