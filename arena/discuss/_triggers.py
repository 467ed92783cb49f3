"""Which battles are discussed: `tie`, `disagreement` and `inconsistent` triggers.

A battle is one ordered pair of answers to a question, `(q, a, b)`, judged by
every reviewer. Its triggers depend only on its own reviews (and, for
`inconsistent`, on those of its mirror `(q, b, a)`), with every reviewer
counting the same. So a battle is selected as soon as its reviews are known,
the same battles are selected whatever order the reviews arrive in, and a
resumed run selects the same ones.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import polars as pl

from arena.config import DiscussionConfig

__all__ = ["TRIGGERS", "battle_triggers", "mirror_verdict", "select_battles"]

TRIGGERS = ("tie", "disagreement", "inconsistent")

_SCORE = {"A": -1, "B": 1, "tie": 0}
_MIRROR = {"A": "B", "B": "A", "tie": "tie"}


def mirror_verdict(verdict: str) -> str:
    """The same judgment with the positions swapped (A <-> B; tie and invalid unchanged)."""
    return _MIRROR.get(verdict, verdict)


def _valid(verdicts: Mapping[str, str]) -> dict[str, str]:
    return {r: str(v) for r, v in verdicts.items() if str(v) in _SCORE}


def battle_triggers(
    verdicts: Mapping[str, str],
    mirror: Mapping[str, str] | None,
    cfg: DiscussionConfig,
) -> tuple[str, ...]:
    """The configured triggers that fire for one battle, in config order.

    `verdicts` maps each reviewer to its verdict on the battle (invalid ones are
    ignored); `mirror` the same for the battle with positions swapped, or None
    when those are not known (then `inconsistent` does not fire).
    - tie: the mean score (-1 A, 0 tie, +1 B) is within `tie_margin` of 0;
    - disagreement: the share of verdicts other than the most common one is at
      least `disagreement`;
    - inconsistent: more than `inconsistent_share` of the reviewers who judged
      both orders give verdicts that are not mirror images of each other
      (default 0: any one such reviewer).
    With `battles: all` every battle is selected: the triggers that fire, or
    `("all",)` when none does.
    """
    valid = _valid(verdicts)
    fired: list[str] = []
    for trigger in dict.fromkeys(cfg.trigger):
        if trigger == "tie" and valid:
            mean = sum(_SCORE[v] for v in valid.values()) / len(valid)
            if abs(mean) <= cfg.tie_margin + 1e-12:
                fired.append(trigger)
        elif trigger == "disagreement" and valid:
            most = Counter(valid.values()).most_common(1)[0][1]
            if 1.0 - most / len(valid) >= cfg.disagreement - 1e-12:
                fired.append(trigger)
        elif trigger == "inconsistent" and mirror is not None:
            swapped = _valid(mirror)
            both = [r for r in valid if r in swapped]
            flipped = sum(1 for r in both if mirror_verdict(valid[r]) != swapped[r])
            if flipped and flipped / len(both) > cfg.inconsistent_share + 1e-12:
                fired.append(trigger)
    if cfg.battles == "all" and not fired:
        return ("all",)  # every battle is discussed; "all" names why when no trigger fired
    return tuple(fired)


def select_battles(
    reviews: pl.DataFrame,
    cfg: DiscussionConfig,
    reviewers: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The battles of a reviews frame whose triggers fire, with the triggers that fired.

    Needs `question_id, model_a, model_b, reviewer, verdict` (`status` is used
    when present: failed reviews are not known). A battle counts once every
    reviewer in `reviewers` (default: every reviewer in the frame) has judged
    it; `inconsistent` also needs its mirror judged. Returns `question_id,
    model_a, model_b, trigger` (comma-separated), sorted.
    """
    frame = reviews
    if "status" in frame.columns:
        frame = frame.filter(pl.col("status") != "failed")
    frame = frame.filter(pl.col("verdict").is_not_null())
    expected = set(reviewers) if reviewers is not None else set(frame["reviewer"].to_list())
    battles: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for q, a, b, r, v in frame.select(
        pl.col("question_id").cast(pl.String), "model_a", "model_b", "reviewer", "verdict"
    ).iter_rows():
        if r in expected:
            battles[(q, a, b)][r] = v
    rows: list[tuple[str, str, str, str]] = []
    for (q, a, b), verdicts in battles.items():
        if set(verdicts) != expected:
            continue
        swapped = battles.get((q, b, a))
        mirror = swapped if swapped is not None and set(swapped) == expected else None
        fired = battle_triggers(verdicts, mirror, cfg)
        if fired:
            rows.append((q, a, b, ",".join(fired)))
    schema = {
        "question_id": pl.String,
        "model_a": pl.String,
        "model_b": pl.String,
        "trigger": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row").sort("question_id", "model_a", "model_b")
