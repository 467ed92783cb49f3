"""Discussion accuracy against human preference labels (the PRD paper's Tables 6-11).

For every finished discussion of a battle that humans labelled, three things
are compared with the human label (A, B or tie; several labels of one battle
are merged by plurality, a tie between categories counting as `tie`; a label
of the mirrored battle counts mirrored):

- before: each discussant's initial preference (the mean of the two);
- after: each discussant's last preference (the mean of the two);
- verdict: the discussion's agreed verdict (an unresolved discussion counts as
  wrong); `verdict_agreed` the same over agreed discussions only.

Pooled over every discussion, and per leader (the discussant who opened),
as PRD's tables report them.

Each accuracy has a 95% percentile bootstrap interval over discussions, and
`change` (after - before) a paired one, resampling discussions with their
before and after together.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import polars as pl

from arena.discuss._triggers import mirror_verdict

__all__ = ["accuracy_line", "discussion_accuracy", "human_labels"]

_READABLE = ("A", "B", "tie")
_Key = tuple[str, str, str]


def human_labels(human: pl.DataFrame) -> dict[_Key, str]:
    """One label per ordered battle `(question, model A, model B)`, both orders filled in.

    `human` needs `question_id, model_a, model_b` and `verdict` (A, B, tie) or
    `score` (-1 A, 0 tie, +1 B); other rows (invalid verdicts) are ignored.
    """
    if "verdict" in human.columns:
        verdicts = [str(v) for v in human["verdict"].to_list()]
    elif "score" in human.columns:
        verdicts = [
            "A" if s is not None and s < 0 else "B" if s is not None and s > 0 else "tie"
            for s in human["score"].to_list()
        ]
    else:
        raise ValueError("human labels need a verdict or a score column")
    votes: dict[_Key, Counter[str]] = defaultdict(Counter)
    rows = human.select(pl.col("question_id").cast(pl.String), "model_a", "model_b").iter_rows()
    for (q, a, b), v in zip(rows, verdicts, strict=True):
        if v not in _READABLE:
            continue
        votes[(q, a, b)][v] += 1
        votes[(q, b, a)][mirror_verdict(v)] += 1
    out: dict[_Key, str] = {}
    for key, count in votes.items():
        top = count.most_common()
        out[key] = "tie" if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]
    return out


def _interval(values: np.ndarray, draws: np.ndarray) -> dict[str, Any]:
    if values.size == 0:
        return {"value": None, "low": None, "high": None}
    means = values[draws].mean(axis=1)
    return {
        "value": float(values.mean()),
        "low": float(np.quantile(means, 0.025)),
        "high": float(np.quantile(means, 0.975)),
    }


def discussion_accuracy(
    discussions: pl.DataFrame,
    human: pl.DataFrame,
    *,
    context: str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Accuracy before and after discussion, and of the verdicts, against human labels.

    Returns `labelled` (finished discussions with a human label), `unlabelled`,
    and `before`, `after`, `change`, `verdict`, `verdict_agreed`, each
    `{value, low, high}` (null when nothing to measure), over all discussions;
    and `by_leader`: the same figures (with `labelled`) for the discussions
    each discussant led, by its name (PRD reports accuracy per leader).
    """
    frame = discussions
    if context is not None and frame.height:
        frame = frame.filter(pl.col("context") == context)
    labels = human_labels(human)
    finals = (
        frame.filter(pl.col("kind") == "final").sort("discussion_id") if frame.height else frame
    )
    first: dict[str, dict[str, str]] = defaultdict(dict)
    last: dict[str, dict[str, str]] = defaultdict(dict)
    if frame.height:
        steps = frame.filter(
            pl.col("kind").is_in(["initial", "turn"]) & pl.col("preference").is_in(list(_READABLE))
        ).sort("discussion_id", "turn", "attempt")
        for did, kind, speaker, pref in steps.select(
            "discussion_id", "kind", "speaker", "preference"
        ).iter_rows():
            if kind == "initial":
                first[did][speaker] = pref
            last[did][speaker] = pref
    before: list[float] = []
    after: list[float] = []
    verdict: list[float] = []
    agreed: list[bool] = []
    leaders: list[str] = []
    unlabelled = 0
    for row in finals.iter_rows(named=True) if finals.height else ():
        label = labels.get((str(row["question_id"]), row["model_a"], row["model_b"]))
        if label is None:
            unlabelled += 1
            continue
        did = row["discussion_id"]
        speakers = (row["leader"], row["follower"])
        before.append(sum(first[did].get(s) == label for s in speakers) / 2)
        after.append(sum(last[did].get(s, first[did].get(s)) == label for s in speakers) / 2)
        verdict.append(float(row["outcome"] == "agreed" and row["verdict"] == label))
        agreed.append(row["outcome"] == "agreed")
        leaders.append(str(row["leader"]))
    columns = (np.array(before), np.array(after), np.array(verdict), np.array(agreed, dtype=bool))
    result: dict[str, Any] = {"labelled": len(before), "unlabelled": unlabelled}
    result.update(_figures(*columns, bootstrap, np.random.default_rng(seed)))
    by_leader: dict[str, Any] = {}
    names = np.array(leaders)
    for n, leader in enumerate(sorted(set(leaders)), 1):
        keep = names == leader
        b, a, v, g = (column[keep] for column in columns)
        rng = np.random.default_rng([seed, n])
        by_leader[leader] = {"labelled": int(keep.sum()), **_figures(b, a, v, g, bootstrap, rng)}
    result["by_leader"] = by_leader
    return result


def _figures(
    before: np.ndarray,
    after: np.ndarray,
    verdict: np.ndarray,
    agreed: np.ndarray,
    bootstrap: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """The five accuracy blocks of one set of discussions (see `discussion_accuracy`)."""
    n = before.size
    draws = rng.integers(0, n, size=(bootstrap, n)) if n else np.zeros((0, 0), dtype=np.int64)
    hits = verdict[agreed]
    agreed_draws = (
        rng.integers(0, hits.size, size=(bootstrap, hits.size))
        if hits.size
        else np.zeros((0, 0), dtype=np.int64)
    )
    return {
        "before": _interval(before, draws),
        "after": _interval(after, draws),
        "change": _interval(after - before, draws),
        "verdict": _interval(verdict, draws),
        "verdict_agreed": _interval(hits, agreed_draws),
    }


def _fmt(block: dict[str, Any]) -> str:
    value = block["value"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.3f} [{block['low']:.3f}, {block['high']:.3f}]"


def accuracy_line(acc: dict[str, Any]) -> str:
    """The accuracy figures in one line for the terminal (then one line per leader)."""
    line = (
        f"accuracy vs human labels ({acc['labelled']} labelled discussions, 95% bootstrap): "
        f"before {_fmt(acc['before'])}, after {_fmt(acc['after'])}, change "
        f"{_fmt(acc['change'])}, verdict {_fmt(acc['verdict'])}, agreed verdicts "
        f"{_fmt(acc['verdict_agreed'])}"
    )
    for leader, part in acc.get("by_leader", {}).items():
        line += (
            f"\n  led by {leader} ({part['labelled']}): before {_fmt(part['before'])}, after "
            f"{_fmt(part['after'])}, change {_fmt(part['change'])}, verdict "
            f"{_fmt(part['verdict'])}"
        )
    return line
