"""Discussion statistics from a discussions table (pure).

Opinion-altering and opinion-holding (PRD paper): in a finished discussion
whose two initial preferences differed, a discussant *altered* its opinion when
its last readable preference differs from its initial one, and *held* it
otherwise. Counted per model, separately as leader and as follower.

Biases before vs after discussion (the paper's Figure 6), over the
discussants' readable preferences in finished discussions, initial ones
(before) and last ones (after):
- position: the share of A among preferences for A or B (0.5: none);
- self-preference: among preferences for A or B by a discussant that is a
  contestant of the battle (only with `allow_contestants`), the share naming
  its own answer (null when no discussant was a contestant).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import polars as pl

__all__ = ["DiscussionStats", "ModelStance", "discussion_stats"]

_READABLE = ("A", "B", "tie")


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else math.nan


@dataclass(frozen=True)
class ModelStance:
    """How one model behaved in discussions, as leader and as follower."""

    model: str
    led: int = 0
    followed: int = 0
    altered_as_leader: int = 0
    held_as_leader: int = 0
    altered_as_follower: int = 0
    held_as_follower: int = 0

    @property
    def altering_as_leader(self) -> float:
        """Share of disputed discussions it led in which it altered its opinion."""
        return _rate(self.altered_as_leader, self.altered_as_leader + self.held_as_leader)

    @property
    def altering_as_follower(self) -> float:
        """Share of disputed discussions it followed in which it altered its opinion."""
        return _rate(self.altered_as_follower, self.altered_as_follower + self.held_as_follower)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON (rates null when undefined)."""
        out: dict[str, Any] = {
            k: getattr(self, k)
            for k in (
                "model",
                "led",
                "followed",
                "altered_as_leader",
                "held_as_leader",
                "altered_as_follower",
                "held_as_follower",
            )
        }
        for k in ("altering_as_leader", "altering_as_follower"):
            value = getattr(self, k)
            out[k] = None if math.isnan(value) else value
        return out


@dataclass(frozen=True)
class DiscussionStats:
    """Discussions run, how they ended, and each model's opinion-altering / holding."""

    discussions: int = 0  # finished (a final row)
    agreed: int = 0
    unresolved: int = 0
    in_progress: int = 0  # started, no final row yet
    disputed: int = 0  # finished with different initial preferences
    mean_turns: float = math.nan
    verdicts: dict[str, int] = field(default_factory=dict)  # agreed verdicts: A / B / tie
    triggers: dict[str, int] = field(default_factory=dict)  # finished, per trigger that fired
    models: list[ModelStance] = field(default_factory=list)
    # {"position" | "self_preference": {"before" | "after": rate, "n_before" | "n_after": count}}
    biases: dict[str, dict[str, float | int | None]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON."""
        return {
            "discussions": self.discussions,
            "agreed": self.agreed,
            "unresolved": self.unresolved,
            "in_progress": self.in_progress,
            "disputed": self.disputed,
            "mean_turns": None if math.isnan(self.mean_turns) else self.mean_turns,
            "verdicts": dict(self.verdicts),
            "triggers": dict(self.triggers),
            "models": [m.to_json() for m in self.models],
            "biases": {k: dict(v) for k, v in self.biases.items()},
        }


def _biases(
    finals: dict[str, dict[str, Any]],
    initial: dict[str, dict[str, str]],
    last: dict[str, dict[str, str]],
) -> dict[str, dict[str, float | int | None]]:
    counts: Counter[str] = Counter()
    for did, final in finals.items():
        for speaker, before in initial[did].items():
            after = last[did].get(speaker, before)
            own = "A" if speaker == final["model_a"] else "B" if speaker == final["model_b"] else ""
            for when, pref in (("before", before), ("after", after)):
                if pref not in ("A", "B"):
                    continue
                counts[f"position_n_{when}"] += 1
                counts[f"position_hit_{when}"] += pref == "A"
                if own:
                    counts[f"self_preference_n_{when}"] += 1
                    counts[f"self_preference_hit_{when}"] += pref == own
    out: dict[str, dict[str, float | int | None]] = {}
    for name in ("position", "self_preference"):
        block: dict[str, float | int | None] = {}
        for when in ("before", "after"):
            n = counts[f"{name}_n_{when}"]
            block[when] = counts[f"{name}_hit_{when}"] / n if n else None
            block[f"n_{when}"] = n
        out[name] = block
    return out


def discussion_stats(discussions: pl.DataFrame, context: str | None = None) -> DiscussionStats:
    """Statistics of a discussions table (with `context`: only that configuration's rows)."""
    if discussions.height == 0:
        return DiscussionStats()
    frame = discussions
    if context is not None:
        frame = frame.filter(pl.col("context") == context)
    finals = {
        r["discussion_id"]: r for r in frame.filter(pl.col("kind") == "final").iter_rows(named=True)
    }
    started = set(frame["discussion_id"].to_list())
    steps = frame.filter(
        pl.col("kind").is_in(["initial", "turn"])
        & pl.col("preference").is_in(list(_READABLE))
        & pl.col("discussion_id").is_in(list(finals))
    )
    steps = steps.sort("discussion_id", "turn", "attempt")
    initial: dict[str, dict[str, str]] = defaultdict(dict)
    last: dict[str, dict[str, str]] = defaultdict(dict)
    for r in steps.iter_rows(named=True):
        if r["kind"] == "initial":
            initial[r["discussion_id"]][r["speaker"]] = r["preference"]
        last[r["discussion_id"]][r["speaker"]] = r["preference"]
    stance: dict[str, Counter[str]] = defaultdict(Counter)
    outcomes: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    triggers: Counter[str] = Counter()
    turns: list[int] = []
    disputed = 0
    for did, final in finals.items():
        outcomes[final["outcome"]] += 1
        if final["outcome"] == "agreed" and final["verdict"]:
            verdicts[final["verdict"]] += 1
        for trig in (final["trigger"] or "").split(","):
            if trig:
                triggers[trig] += 1
        turns.append(int(final["turn"] or 0))
        roles = (("leader", final["leader"]), ("follower", final["follower"]))
        stance[final["leader"]]["led"] += 1
        stance[final["follower"]]["followed"] += 1
        first = initial[did]
        if len(first) < 2 or len(set(first.values())) < 2:
            continue
        disputed += 1
        for role, model in roles:
            moved = last[did].get(model, first[model]) != first[model]
            stance[model][f"{'altered' if moved else 'held'}_as_{role}"] += 1
    models = [
        ModelStance(
            model=m,
            **{
                k: c[k]
                for k in (
                    "led",
                    "followed",
                    "altered_as_leader",
                    "held_as_leader",
                    "altered_as_follower",
                    "held_as_follower",
                )
            },
        )
        for m, c in sorted(stance.items())
    ]
    return DiscussionStats(
        biases=_biases(finals, initial, last),
        discussions=len(finals),
        agreed=outcomes["agreed"],
        unresolved=outcomes["unresolved"],
        in_progress=len(started - finals.keys()),
        disputed=disputed,
        mean_turns=sum(turns) / len(turns) if turns else math.nan,
        verdicts=dict(sorted(verdicts.items())),
        triggers=dict(sorted(triggers.items())),
        models=models,
    )
