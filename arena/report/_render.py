"""Render a leaderboard as a terminal table (rich), markdown, or JSON.

The table and markdown forms show the same sections, built once as rows of
text: models (ordered by Bradley-Terry, with its 95% interval), reviewers and
their diagnostics, the pairwise win-rate matrix, then the sim truth, human
agreement, discussions, BatchEval scores, cost and warnings when there are any.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table

from arena.discuss import discussion_footer, discussion_tables
from arena.report._leaderboard import RANKINGS, Leaderboard, leaderboard_dict

__all__ = ["render_json", "render_markdown", "render_table"]

_LABELS = {
    "win_rate": "win rate",
    "weighted_win_rate": "weighted win rate",
    "elo": "Elo",
    "bt": "Bradley-Terry",
}


_TEXT_COLUMNS = {"#", "model", "reviewer", "judge", "ranking", "criterion", ""}


@dataclass
class _Section:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str]


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 3) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}"


def _sections(board: Leaderboard) -> tuple[list[str], list[_Section], list[str]]:
    r = board.ranking
    rs = r.reviews
    names = board.contestants
    counted = rs.n_rows - rs.n_invalid - rs.n_failed
    intro = [
        f"Leaderboard of {board.source}",
        f"{rs.n_rows} reviews: {counted} counted as battles, {rs.n_invalid} invalid and "
        f"{rs.n_failed} failed (never counted).",
    ]
    elo = board.scores("elo")
    anchored = "the mean" if board.anchor is None else board.anchor
    model_rows = []
    for rank, i in enumerate(board.order, start=1):
        low, high = r.bt.ci_low[i], r.bt.ci_high[i]
        interval = "-" if math.isnan(low) else f"{low:.0f}-{high:.0f}"
        model_rows.append(
            [
                str(rank),
                names[i],
                _fmt(r.bt.rating[i], 0),
                interval,
                _fmt(elo[i], 0),
                _fmt(r.peerrank.win_rate[i]),
                _fmt(r.peerrank.weighted_win_rate[i]),
                str(r.counts.wins[i]),
                str(r.counts.ties[i]),
                str(r.counts.losses[i]),
            ]
        )
    models = _Section(
        "Models (ordered by Bradley-Terry)",
        ["#", "model", "BT", "95% CI", "Elo", "win", "wtd win", "W", "T", "L"],
        model_rows,
        [
            "BT: Bradley-Terry on the Elo scale, reviews weighted by PeerRank weight, "
            f"{anchored} = 1000; CI: bootstrap over questions ({r.bt.bootstrap_rounds} rounds).",
            f"Elo: weighted online Elo, mean of {r.elo.orders if r.elo else 0} random orders. "
            "win: win rate with equal reviewer weights; wtd win: PeerRank weighted win rate.",
        ],
    )
    reviewer_rows = [
        [
            d.reviewer,
            _fmt(d.weight),
            _fmt(d.position_a_share),
            _fmt(d.swap_consistency),
            _signed(d.self_preference),
            _fmt(d.tie_rate),
            _fmt(d.invalid_rate),
        ]
        for d in r.diagnostics
    ]
    reviewers = _Section(
        "Reviewers",
        ["reviewer", "weight", "pos A", "swap", "self", "ties", "invalid"],
        reviewer_rows,
        [
            "pos A: share of decisive verdicts for the answer shown first; swap: share of "
            "battles judged in both orders whose verdicts agree; self: the win rate it gives "
            "its own answers minus the others' for them; ties, invalid: shares of its verdicts.",
            f"PeerRank weights: fixed point after {r.peerrank.iterations} iteration(s)"
            f"{'' if r.peerrank.converged else ' (not converged)'}.",
            f"Fleiss' kappa between reviewers: {_fmt(r.fleiss_kappa)}.",
        ],
    )
    pair_rows = []
    for rank, i in enumerate(board.order, start=1):
        cells = ["" if i == j else _fmt(r.pairwise[i, j], 2) for j in board.order]
        pair_rows.append([f"{rank} {names[i]}", *cells])
    pairwise = _Section(
        "Pairwise win rate (row beats column; ties count half)",
        ["", *[str(k) for k in range(1, len(board.order) + 1)]],
        pair_rows,
        [],
    )
    sections = [models, reviewers, pairwise]
    if board.true_order is not None and board.kendall_tau is not None:
        sections.append(
            _Section(
                "Simulation truth",
                ["ranking", "Kendall tau vs true order"],
                [[_LABELS[k], _fmt(board.kendall_tau[k])] for k in RANKINGS],
                ["True order (by sim skill): " + " > ".join(board.true_order)],
            )
        )
    if board.agreement is not None:
        a = board.agreement
        rows = [
            [name, str(s.n), _fmt(s.accuracy), _fmt(s.kappa)] for name, s in a.reviewers.items()
        ]
        w = a.weighted_majority
        rows.append(["weighted majority", str(w.n), _fmt(w.accuracy), _fmt(w.kappa)])
        corr = "; ".join(
            f"{_LABELS[k]}: tau {_fmt(c.kendall_tau)}, rho {_fmt(c.spearman)}"
            for k, c in a.rankings.items()
        )
        sections.append(
            _Section(
                f"Agreement with human labels ({a.battles} labelled battles)",
                ["judge", "reviews", "accuracy", "kappa"],
                rows,
                [f"Rank correlation with the human win rates: {corr}."],
            )
        )
    if board.discussion is not None:  # docs/discussion.md
        sections += [
            _Section(d.title, d.header, d.rows, d.notes)
            for d in discussion_tables(board.discussion)
        ]
    if board.batcheval is not None:  # docs/batcheval.md
        sections += _batcheval_sections(board.batcheval)
    footer = []
    if board.cost_usd is not None:
        footer.append(f"Total cost: ${board.cost_usd:.4f}")
    if board.discussion is not None:
        footer.extend(discussion_footer(board.discussion))
    footer.extend(f"Warning: {w}" for w in board.warnings)
    return intro, sections, footer


def _batcheval_sections(block: dict[str, Any]) -> list[_Section]:
    """The leaderboard's `batcheval` block: scores per model and criterion, then correlations."""
    scores = _Section(
        "BatchEval scores (mean answer score, 95% bootstrap CI over answers)",
        ["model", "criterion", "mean", "95% CI", "answers", "unscored"],
        [
            [
                r["model"],
                r["criterion"],
                _fmt(r["mean"], 2),
                "-" if r["ci_low"] is None else f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]",
                str(r["answers"]),
                str(r["unscored_answers"]),
            ]
            for r in block["rows"]
        ],
        [
            f"Scorers: {', '.join(block['scorers'])}. An answer's score is its mean over "
            "rounds and scorers; unscored: answers without any score. Round scores that "
            f"could not be read (left out): {block['unscored']}.",
        ],
    )
    against = _LABELS.get(block["against"], block["against"])
    correlation = _Section(
        f"BatchEval means against the {against} ranking",
        ["criterion", "models", "Pearson", "Spearman", "Kendall"],
        [
            [
                c["criterion"],
                str(c["n"]),
                _fmt(c["pearson"]),
                _fmt(c["spearman"]),
                _fmt(c["kendall"]),
            ]
            for c in block["correlation"]
        ],
        [
            "Correlation over the contestants of their BatchEval mean and their pairwise "
            f"rating ({against}); '-' with fewer than 3 models or no spread."
        ],
    )
    if not block.get("human"):
        return [scores, correlation]
    human = _Section(
        "BatchEval scores against human scores (per answer, 95% bootstrap CI)",
        ["criterion", "scorer", "answers", "Pearson", "Spearman"],
        [
            [
                h["criterion"],
                h["scorer"],
                str(h["n"]),
                _with_ci(h["pearson"], h["pearson_ci"]),
                _with_ci(h["spearman"], h["spearman_ci"]),
            ]
            for h in block["human"]
        ],
        [
            "The paper's evaluation: correlation over the answers of their BatchEval score "
            "(mean over rounds; 'all scorers': also over scorers) and their mean human score; "
            "intervals resample answers. '-' with fewer than 3 answers or no spread."
        ],
    )
    return [scores, correlation, human]


def _with_ci(value: float | None, interval: list[float] | None) -> str:
    if value is None:
        return "-"
    text = _fmt(value)
    return text if interval is None else f"{text} [{interval[0]:.3f}, {interval[1]:.3f}]"


def render_json(board: Leaderboard) -> str:
    """The leaderboard as indented JSON (see docs/ranking.md for the schema)."""
    return json.dumps(leaderboard_dict(board), indent=2)


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(board: Leaderboard) -> str:
    """The leaderboard as GitHub-flavoured markdown."""
    intro, sections, footer = _sections(board)
    lines = [f"# {intro[0]}", "", intro[1], ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        lines.append("| " + " | ".join(_escape(h) for h in section.header) + " |")
        lines.append("|" + "|".join("---" for _ in section.header) + "|")
        lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in section.rows]
        lines.append("")
        for note in section.notes:
            lines += [note, ""]
    for note in footer:
        lines += [note, ""]
    return "\n".join(lines).rstrip() + "\n"


def render_table(board: Leaderboard, console: Console) -> None:
    """Print the leaderboard as rich tables on `console`."""
    intro, sections, footer = _sections(board)
    console.print(f"[bold]{intro[0]}[/bold]", highlight=False)
    console.print(intro[1], highlight=False)
    for section in sections:
        table = Table(
            title=section.title,
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            padding=(0, 1),
        )
        for head in section.header:
            justify: JustifyMethod = "left" if head in _TEXT_COLUMNS else "right"
            table.add_column(head, justify=justify, no_wrap=True)
        for row in section.rows:
            table.add_row(*row)
        console.print()
        console.print(table)
        for note in section.notes:
            console.print(note, highlight=False)
    if footer:
        console.print()
    for note in footer:
        style = "yellow" if note.startswith("Warning") else ""
        console.print(note, style=style, highlight=False)
