"""Render a leaderboard as a terminal table (rich), markdown, or JSON.

The table and markdown forms show the same sections, built once as rows of
text: models (ordered by Bradley-Terry, with rank intervals and 95% intervals
of every figure), style control, reviewers and their diagnostics, the pairwise
win-rate and battle-count matrices, then the sim truth, human agreement,
discussions, BatchEval scores, cost and warnings when there are any.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.rank import (
    ELO_BOOTSTRAP_ORDERS,
    ELO_BOOTSTRAP_STEPS,
    MIN_BATTLES,
    MIN_ELO_ROUNDS,
    MIN_QUESTIONS,
    RankTable,
)
from arena.rank._style import significant_features
from arena.report._board import STYLE_RANKING, Leaderboard
from arena.report._categories import category_rows
from arena.report._json import leaderboard_dict
from arena.stage import BoardText
from arena.stages import all_parts

if TYPE_CHECKING:  # rich loads in render_table: the JSON, CSV and markdown need none of it
    from rich.console import Console, JustifyMethod

__all__ = ["render_json", "render_markdown", "render_table"]

_LABELS = {
    "win_rate": "win rate",
    "weighted_win_rate": "weighted win rate",
    "elo": "Elo",
    "bt": "Bradley-Terry",
    STYLE_RANKING: "Bradley-Terry, style-controlled",
}


_TEXT_COLUMNS = {"#", "ranks", "model", "reviewer", "judge", "ranking", "criterion", ""}


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


def _interval(low: float, high: float, digits: int = 0) -> str:
    """`low-high`; an open side (infinite bound) as `>=low` / `<=high`."""
    if math.isnan(low) or math.isnan(high):
        return "-"
    if math.isinf(low) and math.isinf(high):
        return "open"
    if math.isinf(high):
        return f">={low:.{digits}f}"
    if math.isinf(low):
        return f"<={high:.{digits}f}"
    return f"{low:.{digits}f}-{high:.{digits}f}"


def _rank_text(rank: int, group: int, groups: int) -> str:
    if rank <= 0:
        return "-"
    return f"{rank}" if groups <= 1 else f"{group + 1}:{rank}"


def _rank_interval(low: int, high: int) -> str:
    if low <= 0 or high <= 0:
        return "-"
    return str(low) if low == high else f"{low}-{high}"


def _next_shares(board: Leaderboard, ranks: RankTable) -> dict[int, str]:
    """Per model: the bootstrap share of rounds it rates above the next model down."""
    return {n.upper: _fmt(n.share, 2) for n in ranks.neighbours}


def _model_section(board: Leaderboard) -> _Section:
    r = board.ranking
    names = board.contestants
    ranks = r.default_ranks
    # Style-controlled order (a significant style effect): its ratings and interval
    # lead, the raw Bradley-Terry rating and rank stand beside them.
    controlled = r.style if ranks is not r.ranks else None
    groups = int(ranks.group.max(initial=-1)) + 1
    elo = board.scores("elo")
    anchored = "the mean" if board.anchor is None else board.anchor
    shares = _next_shares(board, ranks)
    rows = []
    for i in board.order:
        fit = r.bt if controlled is None else controlled
        interval = _interval(fit.ci_low[i], fit.ci_high[i])
        if interval != "-" and r.thin[i]:
            interval += "*"
        row = [
            _rank_text(int(ranks.rank[i]), int(ranks.group[i]), groups),
            _rank_interval(int(ranks.rank_low[i]), int(ranks.rank_high[i])),
            names[i],
            _fmt(fit.rating[i], 0),
            interval,
            shares.get(i, ""),
        ]
        if controlled is not None:
            raw = int(r.ranks.rank[i])
            row += [_fmt(r.bt.rating[i], 0), "-" if raw <= 0 else str(raw)]
        rows.append(
            row
            + [_fmt(elo[i], 0), _fmt(r.peerrank.win_rate[i]), _fmt(r.peerrank.weighted_win_rate[i])]
        )
    rounds = r.bt.bootstrap_rounds
    if r.intervals == "sandwich":
        ci_note = "95% CI: cluster-robust sandwich by question (normal approximation)"
    elif rounds:
        ci_note = f"95% CI: bootstrap over questions ({rounds} rounds)"
    else:
        ci_note = "no intervals (no bootstrap: --bootstrap 0, or a single question)"
    if r.elo is None:
        elo_note = "Elo: not computed (--elo-orders 0)."
    else:
        error = r.elo.order_error
        spread = (
            ""
            if error is None or not np.isfinite(error).any()
            else f" (order noise: standard error up to {np.nanmax(error):.1f} points)"
        )
        elo_note = f"Elo: weighted online Elo, mean of {r.elo.orders} fixed random orders{spread}."
    weighting = {
        "peerrank": "PeerRank weight",
        "reliability": "reliability weight (own battles left out)",
    }.get(r.weighting, "an equal weight")
    notes = [
        f"BT: Bradley-Terry on the Elo scale, reviews weighted by {weighting}, {anchored} = 1000; "
        f"{ci_note}; * marks an interval resting on fewer than {MIN_QUESTIONS} questions or "
        f"{MIN_BATTLES} battles; >=x / <=x: no bound on the other side (the model lost or won "
        "nothing).",
        "#: rank (tied ratings share it"
        + ("; g:n = rank n within comparison group g" if groups > 1 else "")
        + "); ranks: from 1 + models whose interval lies entirely above, to models whose "
        "interval does not lie entirely below; >next: "
        + (
            "probability (normal, from the same covariance) that the model rates above the "
            "next one down."
            if r.intervals == "sandwich"
            else "share of bootstrap rounds in which the model rates above the next one down."
        ),
        f"{elo_note} win: win rate with equal reviewer weights; wtd win: "
        + ("reliability" if r.weighting == "reliability" else "PeerRank")
        + " weighted win rate (weighted mean).",
    ]
    if r.style is None:
        notes.append(f"Style control: unavailable ({r.style_note}).")
    if controlled is None:
        return _Section(
            "Models (ordered by Bradley-Terry)",
            ["#", "ranks", "model", "BT", "95% CI", ">next", "Elo", "win", "wtd win"],
            rows,
            notes,
        )
    effects = ", ".join(controlled.features[k] for k in significant_features(controlled))
    notes.insert(
        0,
        f"Order: style-controlled Bradley-Terry (ctl BT, its 95% CI, ranks and >next), because "
        f"the judges' preference for {effects} is significant (see the warnings and the style "
        "control table); BT and BT #: the raw Bradley-Terry rating and rank, weighted as below.",
    )
    return _Section(
        "Models (ordered by style-controlled Bradley-Terry)",
        ["#", "ranks", "model", "ctl BT", "95% CI", ">next", "BT", "BT #", "Elo", "win", "wtd win"],
        rows,
        notes,
    )


def _interval_section(board: Leaderboard) -> _Section:
    """95% intervals of Elo and the win rates (BT's is in the models table), sample sizes."""
    r = board.ranking
    names = board.contestants
    rows = [
        [
            names[i],
            _interval(r.elo_ci[0, i], r.elo_ci[1, i]),
            _interval(r.win_rate_ci[0, i], r.win_rate_ci[1, i], 3),
            _interval(r.weighted_win_rate_ci[0, i], r.weighted_win_rate_ci[1, i], 3),
            f"{r.counts.wins[i]}-{r.counts.ties[i]}-{r.counts.losses[i]}",
            str(r.counts.battles[i]),
            str(r.questions[i]),
        ]
        for i in board.order
    ]
    rounds = r.bootstrap_rounds
    notes = [
        "W-T-L: wins, ties, losses; n: counted battles; q: questions with a battle."
        if not rounds
        else f"Intervals: the same bootstrap over questions ({rounds} rounds). W-T-L: wins, "
        "ties, losses; n: counted battles; q: questions with a battle."
    ]
    if r.elo is not None and r.elo_ci_rounds:
        notes.append(
            f"Elo CI: the first {r.elo_ci_rounds} of those rounds, each with its own weight "
            f"passes and {min(r.elo.orders, ELO_BOOTSTRAP_ORDERS)} random orders."
        )
    elif r.elo is not None and rounds:
        notes.append(
            "No Elo CI: online Elo depends on the review order, and a bootstrap of it is "
            f"stable only with at least {MIN_ELO_ROUNDS} rounds (--elo-bootstrap N, while "
            f"rounds x reviews stays within {ELO_BOOTSTRAP_STEPS:,}); the JSON's "
            "elo_order_error is the order noise of each point. Use the BT interval."
        )
    return _Section(
        "95% intervals and sample sizes",
        ["model", "Elo CI", "win CI", "wtd win CI", "W-T-L", "n", "q"],
        rows,
        notes,
    )


def _style_section(board: Leaderboard) -> _Section | None:
    r = board.ranking
    style, ranks = r.style, r.style_ranks
    if style is None or ranks is None:
        return None
    names = board.contestants
    groups = int(ranks.group.max(initial=-1)) + 1
    shares = _next_shares(board, ranks)
    rows = []
    refit = r.style_weight_ranks
    for i in ranks.order:
        raw, ctl = int(r.ranks.rank[i]), int(ranks.rank[i])
        mid = raw if refit is None else int(refit.rank[i])
        by_weights = "" if raw <= 0 or mid <= 0 or raw == mid else f"{raw - mid:+d}"
        by_style = "" if mid <= 0 or ctl <= 0 or mid == ctl else f"{mid - ctl:+d}"
        rows.append(
            [
                _rank_text(ctl, int(ranks.group[i]), groups),
                _rank_interval(int(ranks.rank_low[i]), int(ranks.rank_high[i])),
                names[i],
                _fmt(style.rating[i], 0),
                _interval(style.ci_low[i], style.ci_high[i]),
                shares.get(i, ""),
                _fmt(r.bt.rating[i], 0),
                by_weights,
                by_style,
            ]
        )
    coefs = "; ".join(
        f"{name} {_signed(style.coef[k])}"
        + (
            ""
            if math.isnan(style.coef_low[k])
            else f" ({_signed(style.coef_low[k])} to {_signed(style.coef_high[k])})"
        )
        for k, name in enumerate(style.features)
    )
    notes = [
        "Bradley-Terry with style covariates: normalised differences (A - B) / (A + B) of "
        "answer length and markdown headers, list items and bold spans, each scaled to unit "
        "root mean square, fitted jointly with the ratings and reviewer weights.",
        f"Style coefficients (log-odds per unit, 95% CI): {coefs}. "
        "Positive: judges favour the answer with more of it.",
        "ctl BT: style-controlled rating; BT: raw rating; the raw rank minus the controlled "
        "rank, in two parts: weights: the move from refitting the reviewer weights with the "
        "style terms (raw rank minus the plain BT rank at the style fit's weights; none with "
        "fixed weights), style: the move from the style terms themselves (that rank minus "
        "the controlled rank).",
    ]
    if style.dropped:
        notes.append(f"Not fitted (no variation): {', '.join(style.dropped)}.")
    return _Section(
        "Style control",
        ["#", "ranks", "model", "ctl BT", "95% CI", ">next", "BT", "weights", "style"],
        rows,
        notes,
    )


def _baseline_section(board: Leaderboard) -> _Section:
    controlled = (
        {lc.model: lc for lc in board.length_control.rates}
        if board.length_control is not None
        else None
    )
    rows = [
        [
            rate.model,
            _fmt(100 * rate.win_rate, 2),
            _interval(100 * rate.ci_low, 100 * rate.ci_high, 2),
            _fmt(100 * rate.discrete_win_rate, 2),
            str(rate.n),
            _fmt(rate.avg_length, 0),
        ]
        + (
            []
            if controlled is None
            else [
                _fmt(100 * controlled[rate.model].lc_win_rate, 2),
                _interval(
                    100 * controlled[rate.model].lc_ci_low,
                    100 * controlled[rate.model].lc_ci_high,
                    2,
                ),
            ]
        )
        for rate in board.vs_baseline or []
    ]
    notes = [
        "win rate: the weighted mean share of the win (graded verdicts count as given); "
        "discrete: wins plus half the ties over the battles; 95% CI: bootstrap over "
        "questions; avg length: characters of the model's answers, where known."
    ]
    header = ["model", "win rate", "95% CI", "discrete", "n", "avg length"]
    if controlled is not None:
        header += ["LC win rate", "LC 95% CI"]
        table = board.length_control.difficulty if board.length_control else None
        source = (
            "none (every question 0)"
            if table is None
            else f"{table.file or 'a table'} (reference: {len(table.reference_models)} "
            f"models: {', '.join(table.reference_models)})"
        )
        notes.append(
            "LC win rate: length-controlled, the win rate predicted at the baseline's "
            "length by a logistic fit of each model alone on its strength, the tanh of "
            "its standardised length difference and the questions' fixed difficulties; "
            f"difficulties: {source}; LC 95% CI: bootstrap over questions, refitted each round."
        )
    return _Section(f"Win rate against {board.baseline} (%)", header, rows, notes)


def _sections(board: Leaderboard) -> tuple[list[str], list[_Section], list[str]]:
    r = board.ranking
    rs = r.reviews
    names = board.contestants
    counted = rs.n_rows - rs.n_invalid - rs.n_failed
    intro = [
        f"Leaderboard of {board.source}",
        f"{rs.n_rows} reviews: {counted} counted as battles, {rs.n_invalid} invalid and "
        f"{rs.n_failed} failed (never counted); {rs.n_questions} question(s).",
    ]
    if rs.n_self_excluded:
        intro[1] += f" {rs.n_self_excluded} reviews of the reviewer's own battles left out."
    models = _model_section(board)
    bias = r.length_bias
    reviewer_rows = [
        [
            d.reviewer,
            _fmt(d.weight),
            _fmt(d.position_a_share),
            _fmt(d.swap_consistency),
            _signed(d.self_preference),
            _fmt(d.tie_rate),
            _fmt(d.invalid_rate),
            "-" if bias is None else _fmt(bias[k]),
            str(d.battles),
        ]
        for k, d in enumerate(r.diagnostics)
    ]
    pr = r.peerrank
    rel = r.reliability
    if r.weighting == "equal":
        fixed = "Reviewer weights: all equal (--weights equal)."
    elif rel is not None:
        parts = ", ".join(
            f"{name} {rel.discrimination[k]:.2f}/"
            + ("-" if np.isnan(rel.position_bias[k]) else f"{rel.position_bias[k]:+.2f}")
            + "/"
            + ("-" if np.isnan(rel.self_preference[k]) else f"{rel.self_preference[k]:+.2f}")
            for k, name in enumerate(rel.reviewers)
        )
        fixed = (
            "Reliability weights (--weights reliability): proportional to each reviewer's "
            "discrimination, fitted with the ratings; discrimination/position bias/"
            f"self-preference (log-odds; -: not measurable from these battles): {parts}. "
            "Own battles are left out of the ratings."
        )
    else:
        fixed = f"PeerRank weights: fixed point after {pr.iterations} iteration(s)"
        if pr.damping > 0:
            fixed += f", damped (damping {pr.damping:.3g})"
        fixed += "." if pr.converged else " (not converged)."
    reviewers = _Section(
        "Reviewers",
        ["reviewer", "weight", "pos A", "swap", "self", "ties", "invalid", "longer", "n"],
        reviewer_rows,
        [
            "pos A: share of decisive verdicts for the answer shown first; swap: share of "
            "battles judged in both orders whose verdicts agree; self: the win rate it gives "
            "its own answers minus the others' for them; ties, invalid: shares of its verdicts; "
            "longer: share of its decisive verdicts won by the longer answer; n: its battles.",
            fixed,
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
    count_rows = [
        [f"{rank} {names[i]}", *["" if i == j else str(r.pair_battles[i, j]) for j in board.order]]
        for rank, i in enumerate(board.order, start=1)
    ]
    battles = _Section(
        "Battles per pair (both orders, every reviewer)",
        ["", *[str(k) for k in range(1, len(board.order) + 1)]],
        count_rows,
        [],
    )
    style = _style_section(board)
    sections = [models, _interval_section(board), *([] if style is None else [style])]
    if board.vs_baseline is not None:
        if board.sampling is not None and board.sampling.get("strategy") == "baseline":
            sections.insert(0, _baseline_section(board))  # a baseline run's headline figure
        else:
            sections.append(_baseline_section(board))
    sections += [reviewers, pairwise, battles]
    if board.true_order is not None and board.kendall_tau is not None:
        sections.append(
            _Section(
                "Simulation truth",
                ["ranking", "Kendall tau vs true order"],
                [[_LABELS.get(k, k), _fmt(v)] for k, v in board.kendall_tau.items()],
                ["True order (by sim skill): " + " > ".join(board.true_order)],
            )
        )
    if board.agreement is not None:
        a = board.agreement
        rows = [
            [
                name,
                str(s.n),
                _fmt(s.accuracy),
                _interval(s.accuracy_low, s.accuracy_high, 2),
                _fmt(s.kappa),
            ]
            for name, s in a.reviewers.items()
        ]
        w = a.weighted_majority
        rows.append(
            [
                "weighted majority",
                str(w.n),
                _fmt(w.accuracy),
                _interval(w.accuracy_low, w.accuracy_high, 2),
                _fmt(w.kappa),
            ]
        )
        corr = "; ".join(
            f"{_LABELS[k]}: tau {_fmt(c.kendall_tau)}, rho {_fmt(c.spearman)}"
            for k, c in a.rankings.items()
        )
        sections.append(
            _Section(
                f"Agreement with human labels ({a.battles} labelled battles)",
                ["judge", "reviews", "accuracy", "95% CI", "kappa"],
                rows,
                [f"Rank correlation with the human win rates: {corr}."],
            )
        )
    texts = _stage_texts(board)
    for text in texts:  # docs/discussion.md
        sections += [_Section(d.title, d.header, d.rows, d.notes) for d in text.tables]
    if board.batcheval is not None:  # docs/batcheval.md
        sections += _batcheval_sections(board.batcheval)
    footer = []
    if board.sampling is not None:
        d = board.sampling
        footer.append(
            f"Sampled design ({d['strategy']}): {d['ranked_review_calls']} reviews of "
            f"{d['units']} selected battles in {d['rounds']} round(s); win rates are "
            + (
                "the mean over opponents of the per-pair rates (pairs never compared "
                "imputed from Bradley-Terry)."
                if d["balanced_win_rates"]
                else "plain rates over the battles each model had."
            )
        )
    if board.cost_usd is not None:
        footer.append(f"Total cost: ${board.cost_usd:.4f}")
    for text in texts:
        footer.extend(text.footer)
    footer.extend(f"Warning: {w}" for w in board.warnings)
    return intro, sections, footer


def _stage_texts(board: Leaderboard) -> list[BoardText]:
    """Each part's block on the board as text (registry order)."""
    out = []
    for part in all_parts():
        block = None if part.board is None else board.stage_block(part.board.key)
        if block is not None and part.board is not None:
            out.append(part.board.text(block))
    return out


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


def _category_sections(board: Leaderboard) -> list[_Section]:
    """`--by category`: Bradley-Terry rating and rank of each model within each category."""
    if not board.by_category:
        return []
    header, rows = category_rows(board.by_category)
    note = (
        "Each category ranked on its own reviews (Bradley-Terry rating, rank within the "
        "category); `--format json` has every figure."
    )
    return [_Section("By category", header, rows, [note])]


def render_json(board: Leaderboard) -> str:
    """The leaderboard as indented JSON (see docs/ranking.md for the schema)."""
    return json.dumps(leaderboard_dict(board), indent=2)


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(board: Leaderboard) -> str:
    """The leaderboard as GitHub-flavoured markdown."""
    intro, sections, footer = _sections(board)
    sections = sections + _category_sections(board)
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
    from rich import box
    from rich.table import Table

    intro, sections, footer = _sections(board)
    sections = sections + _category_sections(board)
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
