"""The leaderboard's discussion block: statistics, and the rankings with and without outcomes.

`arena.report` ranks a run directory's reviews twice when it has discussions
(with the agreed verdicts applied, as the leaderboard's ranking, and without),
and hands both to `discussion_block`, which builds the JSON block; the table
and markdown renderers show `discussion_tables` of that block.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.discuss._accuracy import accuracy_line
from arena.discuss._rundir import DiscussionReport

__all__ = [
    "DiscussionTable",
    "bias_line",
    "discussion_block",
    "discussion_footer",
    "discussion_tables",
]

# model -> ranking name (win_rate, weighted_win_rate, elo, bt) -> score (None if undefined)
Scores = Mapping[str, Mapping[str, float | None]]


@dataclass(frozen=True)
class DiscussionTable:
    """One table of text for the leaderboard renderers."""

    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str]


def discussion_block(
    report: DiscussionReport,
    order_with: Sequence[str],
    scores_with: Scores,
    order_without: Sequence[str],
    scores_without: Scores,
    tau_without: Mapping[str, float | None] | None = None,
) -> dict[str, Any]:
    """The leaderboard JSON's `discussion` object.

    `order_*` are the models best first and `scores_*` their scores, ranked
    with the discussion outcomes applied (the leaderboard's ranking) and
    without; `tau_without` the Kendall tau of each ranking without the
    outcomes against the sim truth, when known.
    """
    rank_with = {m: k for k, m in enumerate(order_with, 1)}
    rank_without = {m: k for k, m in enumerate(order_without, 1)}
    rankings = []
    for model in order_with:
        row: dict[str, Any] = {
            "model": model,
            "rank": rank_with[model],
            "rank_without": rank_without.get(model),
        }
        for name in ("bt", "weighted_win_rate"):
            row[name] = scores_with.get(model, {}).get(name)
            row[f"{name}_without"] = scores_without.get(model, {}).get(name)
        rankings.append(row)
    block: dict[str, Any] = {
        "outcome": report.state.outcome,
        "weight": report.state.weight,
        "trigger": list(report.state.trigger),
        **report.stats.to_json(),
        "rankings": rankings,
    }
    if tau_without is not None:
        block["kendall_tau_without"] = dict(tau_without)
    return block


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def bias_line(biases: Mapping[str, Mapping[str, Any]]) -> str:
    """Position and self-preference rates before vs after discussion, in one sentence."""
    parts = []
    for name, label in (
        ("position", "position (share of A)"),
        ("self_preference", "self-preference"),
    ):
        rates = biases.get(name)
        if rates and (rates.get("n_before") or rates.get("n_after")):
            parts.append(
                f"{label} {_fmt(rates.get('before'))} before -> {_fmt(rates.get('after'))} after "
                f"(n {rates.get('n_before')} / {rates.get('n_after')})"
            )
    return ("Discussants' preferences: " + "; ".join(parts) + ".") if parts else ""


def discussion_footer(block: Mapping[str, Any]) -> list[str]:
    """What the discussion outcomes did to the ranking, said plainly for the footer."""
    unresolved = f"{block['unresolved']} unresolved discussion(s) changed nothing"
    if block["outcome"] == "replace":
        return [
            f"Discussions (outcome replace): in each of the {block['agreed']} agreed "
            "discussion(s), two discussants' shared verdict overwrote the verdicts of every "
            f"reviewer of that battle; {unresolved}. The rankings above use these verdicts; "
            "see 'Rankings with and without discussion outcomes'."
        ]
    return [
        f"Discussions (outcome add): each of the {block['agreed']} agreed discussion(s) added "
        f"{block['weight']} review(s) by the reviewer (discussion), next to the reviewers' own; "
        f"{unresolved}."
    ]


def discussion_tables(block: Mapping[str, Any]) -> list[DiscussionTable]:
    """The discussion block as text tables: per-model behaviour, then both rankings."""
    how = (
        "replace (every review of a discussed battle takes the verdict its two discussants "
        "agreed on)"
        if block["outcome"] == "replace"
        else f"add (each agreed verdict counts as {block['weight']} review(s) by "
        "the reviewer (discussion))"
    )
    notes = [
        f"{block['discussions']} discussions ({block['agreed']} agreed, {block['unresolved']} "
        f"unresolved, {block['in_progress']} in progress); triggers: "
        + (", ".join(f"{k} {v}" for k, v in block["triggers"].items()) or "-")
        + f"; mean turns {_fmt(block['mean_turns'], 2)}.",
        f"Outcome: {how}; the rankings above use it.",
        "Altered / held: in discussions whose initial preferences differed, how often the "
        "model ended on a different preference than its initial one, or kept it.",
    ]
    line = bias_line(block.get("biases") or {})
    if line:
        notes.append(line)
    if block.get("human_accuracy"):
        notes.append(accuracy_line(block["human_accuracy"]) + ".")
    models = DiscussionTable(
        "Discussions",
        [
            "model",
            "led",
            "altered as leader",
            "held as leader",
            "followed",
            "altered as follower",
            "held as follower",
        ],
        [
            [
                m["model"],
                str(m["led"]),
                str(m["altered_as_leader"]),
                str(m["held_as_leader"]),
                str(m["followed"]),
                str(m["altered_as_follower"]),
                str(m["held_as_follower"]),
            ]
            for m in block["models"]
        ],
        notes,
    )
    ranking_notes = []
    if "kendall_tau_without" in block:
        taus = block["kendall_tau_without"]
        ranking_notes.append(
            "Kendall tau vs the true order without the outcomes: "
            + ", ".join(f"{k} {_fmt(v)}" for k, v in taus.items())
            + "."
        )
    rankings = DiscussionTable(
        "Rankings with and without discussion outcomes",
        ["model", "#", "BT", "wtd win", "# without", "BT without", "wtd win without"],
        [
            [
                r["model"],
                str(r["rank"]),
                _fmt(r["bt"], 0),
                _fmt(r["weighted_win_rate"]),
                _fmt(r["rank_without"]),
                _fmt(r["bt_without"], 0),
                _fmt(r["weighted_win_rate_without"]),
            ]
            for r in block["rankings"]
        ],
        ranking_notes,
    )
    return [models, rankings]
