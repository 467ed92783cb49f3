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
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from arena.config import Question, Tournament

__all__ = [
    "Shard",
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
    """The shard a run directory's tournament.json records, if any."""
    entry = snapshot.get("shard")
    if not isinstance(entry, dict):
        return None
    return Shard(int(entry["index"]), int(entry["count"]))
