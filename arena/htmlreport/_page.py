"""The report as one self-contained HTML page: inline styles, inline SVG, no script.

Every piece of text that comes from the run (model and reviewer names,
questions, answers, reviews, discussion turns, error messages, even numbers
formatted as text) goes through `html.escape` here, and the page's
Content-Security-Policy forbids scripts altogether, so a model's answer can
neither add markup nor run anything.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from arena.htmlreport._data import ReportData
from arena.htmlreport._svg import Series, heatmap, interval_chart, line_chart, trajectory_chart
from arena.rank import ranking_trajectory, weighted_pairwise
from arena.report import Leaderboard
from arena.stages import all_parts

__all__ = ["render_report"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; margin: 0 auto; max-width: 1180px;
       padding: 1em 1.5em 3em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #d8dce3; padding-bottom: 0.2em; margin-top: 2em; }
.meta, .note { color: #555; }
.warning { color: #8a5a00; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e4e7ec; text-align: left; }
th { background: #f6f7f9; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { display: block; margin: 0.6em 0; max-width: 100%; height: auto; }
details.battle { border: 1px solid #d8dce3; margin: 0.6em 0; padding: 0.3em 0.8em; }
details.battle summary { cursor: pointer; font-weight: 600; }
.answers { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.answers > div { min-width: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f7f9; padding: 0.5em;
      margin: 0.3em 0; font: 13px/1.4 ui-monospace, monospace; }
.review, .turn { border-top: 1px solid #e4e7ec; margin-top: 0.4em; padding-top: 0.3em; }
.failed { color: #b00020; }
nav a { margin-right: 1em; }
"""

# Leaderboard columns: (header, JSON key, digits); a column shows when any model has its key.
# "<key>_ci" is the interval of <key> from `<key>_ci_low` and `<key>_ci_high`.
_MODEL_COLUMNS = (
    ("rank CI", "rank_ci", 0),
    ("BT", "bt", 0),
    ("95% CI", "bt_ci", 0),
    ("BT style", "bt_style", 0),
    ("style CI", "bt_style_ci", 0),
    ("style #", "style_rank", 0),
    ("BT #", "bt_rank", 0),
    ("BT rank CI", "bt_rank_ci", 0),
    ("Elo", "elo", 0),
    ("Elo order error", "elo_order_error", 1),
    ("win", "win_rate", 3),
    ("wtd win", "weighted_win_rate", 3),
    ("W", "wins", 0),
    ("T", "ties", 0),
    ("L", "losses", 0),
    ("battles", "battles", 0),
    ("questions", "questions", 0),
    ("beats next", "beats_next", 2),
)
# Fields shown some other way (or not at all: `group` is in the warnings).
_SHOWN_ELSEWHERE = {
    "model",
    "rank",
    "rank_low",
    "rank_high",
    "bt_rank_low",
    "bt_rank_high",
    "few_data",
    "group",
}
_RANKING_LABELS = {
    "win_rate": "win rate",
    "weighted_win_rate": "weighted win rate",
    "elo": "Elo",
    "bt": "Bradley-Terry",
    "bt_style": "Bradley-Terry, style-controlled",
}
_REVIEWER_COLUMNS = (
    ("weight", "weight", 3),
    ("position_a_share", "pos A", 3),
    ("swap_consistency", "swap", 3),
    ("self_preference", "self", 3),
    ("length_bias", "longer wins", 3),
    ("tie_rate", "ties", 3),
    ("invalid_rate", "invalid", 3),
)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "-"
        return f"{value:.{digits}f}"
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"{_fmt(value[0], digits)}-{_fmt(value[1], digits)}"
    return str(value)


def _cell(value: str, numeric: bool) -> str:
    return f'<td class="num">{_e(value)}</td>' if numeric else f"<td>{_e(value)}</td>"


def _table(
    css_id: str, header: Sequence[str], rows: Iterable[Sequence[str]], text_columns: int = 1
) -> str:
    """A table whose first `text_columns` columns are text and the rest numbers."""
    head = "".join(
        f"<th>{_e(h)}</th>" if k < text_columns else f'<th class="num">{_e(h)}</th>'
        for k, h in enumerate(header)
    )
    body = "".join(
        "<tr>" + "".join(_cell(v, k >= text_columns) for k, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    ident = f' id="{_e(css_id)}"' if css_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _p(text: str, cls: str = "note") -> str:
    return f'<p class="{cls}">{_e(text)}</p>'


def _interval(m: Mapping[str, Any], key: str, digits: int) -> str | None:
    return _bounds(m.get(f"{key}_ci_low"), m.get(f"{key}_ci_high"), digits)


def _bounds(low: float | None, high: float | None, digits: int) -> str | None:
    if low is None or high is None:
        return None
    if low < 0 or high < 0:  # "a-b" would read as a minus sign
        return f"[{_fmt(low, digits)}, {_fmt(high, digits)}]"
    return f"{_fmt(low, digits)}-{_fmt(high, digits)}"


def _board(data: ReportData) -> Leaderboard:
    """The ranked board (every report but one of single-answer grades has one)."""
    if data.board is None:
        raise ValueError("a report of single-answer grades has no ranked leaderboard")
    return data.board


def _model_value(m: Mapping[str, Any], key: str, digits: int) -> str | None:
    """The cell of a model row, None when the row does not have the field."""
    if key in ("rank_ci", "bt_rank_ci"):
        low = key[: -len("_ci")] + "_low"
        if low not in m:
            return None
        high = m[key[: -len("_ci")] + "_high"]
        return "-" if m[low] is None else f"{m[low]}-{high}"
    if key.endswith("_ci"):
        return _interval(m, key[: -len("_ci")], digits)
    if key not in m:
        return None
    return _fmt(m[key], digits)


def _extra_keys(models: Sequence[Mapping[str, Any]]) -> list[str]:
    """Model fields no column shows (a newer leaderboard may add some), in order."""
    known = {key for _, key, _ in _MODEL_COLUMNS} | _SHOWN_ELSEWHERE
    keys: list[str] = []
    for row in models:
        for key, value in row.items():
            if key in known or key in keys or key.endswith(("_ci_low", "_ci_high")):
                continue
            if value is None or isinstance(value, int | float | str | list):
                keys.append(key)
    return keys


def _leaderboard(data: ReportData) -> str:
    lb = data.leaderboard
    beats_next = {n["upper"]: n["share"] for n in lb.get("neighbours", [])}
    models = [
        {**m, "beats_next": beats_next[m["model"]]} if m["model"] in beats_next else m
        for m in lb["models"]
    ]
    columns = [c for c in _MODEL_COLUMNS if any(_model_value(m, c[1], c[2]) for m in models)]
    extra = _extra_keys(models)
    lengths = data.avg_length
    header = [
        "#",
        "model",
        *(label for label, _, _ in columns),
        *(["avg length"] if lengths else []),
        *extra,
    ]
    rows = []
    for k, m in enumerate(models, start=1):
        rank = str(k) if "rank" not in m else ("-" if m["rank"] is None else str(m["rank"]))
        name = f"{m['model']} *" if m.get("few_data") else m["model"]
        cells = [rank, name, *(_model_value(m, key, digits) or "-" for _, key, digits in columns)]
        if lengths:
            length = lengths.get(m["model"])
            cells.append("-" if length is None else f"{length:.0f}")
        for key in extra:
            value = m.get(key)
            cells.append(_fmt(value, 3 if isinstance(value, float) else 0))
            interval = _interval(m, key, 3)
            if interval is not None:
                cells[-1] += f" [{interval}]"
        rows.append(cells)
    anchor = _board(data).anchor
    anchored = "the mean" if anchor is None else anchor
    notes = [
        "BT: Bradley-Terry on the Elo scale, reviews weighted by the reviewer weights "
        f"(--weights), {anchored} = 1000; CI: clustered by question (--intervals). "
        "Elo: weighted online Elo over a fixed set of orders (order error: its spread "
        "over the orders). win: win rate with equal reviewer weights; wtd win: the "
        "weighted win rate.",
    ]
    if lengths:
        notes.append("avg length: mean length of the model's answers in characters (all turns).")
    if "rank_low" in models[0] if models else False:
        notes.append(
            "#: rank within its group of compared models ('-': no battles); rank CI: the "
            "ranks the 95% intervals allow; beats next: the probability that the model "
            "rates above the next one (from the same intervals' method)."
        )
    if any("bt_style" in m for m in models):
        notes.append(
            "BT style: Bradley-Terry with answer length and markdown as covariates (style "
            "control); style #: its rank."
        )
    if lb.get("rank_by") == "bt_style":
        notes.insert(
            0,
            "Order: style-controlled Bradley-Terry (rank_by: bt_style): #, rank CI and beats "
            "next follow the BT style ratings, because the judges' preference for a style "
            "feature is significant (see the warnings and the style control coefficients); "
            "BT and BT #: the raw Bradley-Terry rating and rank, BT rank CI: the ranks its "
            "intervals allow.",
        )
    else:
        notes.insert(0, "Order: Bradley-Terry: #, rank CI and beats next follow BT.")
    if any(m.get("few_data") for m in models):
        notes.append("*: few questions or battles; its intervals rest on little data.")
    if "true_order" in lb:
        tau = ", ".join(f"{k} {_fmt(v)}" for k, v in lb.get("kendall_tau", {}).items())
        notes.append(f"Simulation truth: {' > '.join(lb['true_order'])}. Kendall tau vs it: {tau}.")
    return (
        '<section id="leaderboard-section"><h2>Leaderboard</h2>'
        + _table("leaderboard", header, rows, text_columns=2)
        + "".join(_p(n) for n in notes)
        + "</section>"
    )


def _interval_series(models: Sequence[Mapping[str, Any]]) -> list[tuple[str, Series]]:
    """(key, series) for every model field with an interval (`X_ci_low`, `X_ci_high`)."""
    first = models[0] if models else {}
    keys = [
        k[: -len("_ci_low")]
        for k in first
        if k.endswith("_ci_low") and f"{k[: -len('_ci_low')]}_ci_high" in first
    ]
    return [
        (
            key,
            Series(
                label=_RANKING_LABELS.get(key, key),
                values=[m.get(key) for m in models],
                low=[m.get(f"{key}_ci_low") for m in models],
                high=[m.get(f"{key}_ci_high") for m in models],
            ),
        )
        for key in keys
    ]


def _panel(key: str) -> str:
    """Which chart a rating goes to: ratings on one scale share an axis."""
    if key.startswith("bt"):
        return "Bradley-Terry"
    if key.endswith("win_rate"):
        return "Win rates"
    return _RANKING_LABELS.get(key, key)


def _style(lb: Mapping[str, Any]) -> str:
    style = lb.get("style_control")
    if not style:
        return ""
    if not style.get("available"):
        return _p(f"Style control unavailable: {style.get('reason') or 'no answer style'}.")
    rows = [
        [name, _fmt(c["coef"]), _bounds(c["ci_low"], c["ci_high"], 3) or "-"]
        for name, c in style["coefficients"].items()
    ]
    return (
        "<h3>Style control coefficients</h3>"
        + _table("style", ["feature", "coefficient", "95% CI"], rows)
        + _p(
            "Log-odds of winning per unit of each normalised style difference between the "
            "two answers (positive: the judges favour more of it), fitted with the ratings."
        )
    )


def _charts(data: ReportData) -> str:
    models = data.leaderboard["models"]
    names = [m["model"] for m in models]
    panels: dict[str, list[Series]] = {}
    for key, series in _interval_series(models):
        panels.setdefault(_panel(key), []).append(series)
    out = ['<section id="charts"><h2>Ratings with 95% intervals</h2>']
    for title, series_list in panels.items():
        css_id = (
            "ratings" if title == "Bradley-Terry" else "chart-" + title.lower().replace(" ", "-")
        )
        digits = 3 if title == "Win rates" else 0
        out.append(f"<h3>{_e(title)}</h3>")
        out.append(interval_chart(names, series_list, digits=digits, css_id=css_id))
    out.append(
        _p(
            "Dots: estimates; whiskers: 95% intervals over questions (Bradley-Terry: "
            "cluster-robust by question unless the ranking used --intervals bootstrap; "
            "win rates: the question bootstrap); models best first."
        )
    )
    out.append(_style(data.leaderboard))
    out.append("</section>")
    return "".join(out)


def _pairwise(data: ReportData) -> str:
    lb = data.leaderboard
    names = [m["model"] for m in lb["models"]]
    return (
        '<section id="pairwise"><h2>Pairwise win rate</h2>'
        + heatmap(names, lb["diagnostics"]["pairwise"], lb["diagnostics"]["pair_battles"])
        + _p(
            "Row beats column: share of the battles between the two won by the row model "
            "(ties count half); n: battles counted (both orders, every reviewer)."
        )
        + "</section>"
    )


_WEIGHTING_NOTE = {
    "reliability": "reliability weights; a reviewer's own battles left out",
    "peerrank": "PeerRank weights",
    "equal": "equal weights",
}


def _weighted(data: ReportData) -> str:
    """The weighted pairwise heatmap and the Elo trajectory (the PRD paper's Figure 4)."""
    board = _board(data)
    ranking = board.ranking
    lb = data.leaderboard
    names = [m["model"] for m in lb["models"]]
    code = {name: k for k, name in enumerate(board.contestants)}
    shares = weighted_pairwise(ranking)
    rates = {
        row: {
            col: None
            if math.isnan(shares[code[row], code[col]])
            else float(shares[code[row], code[col]])
            for col in names
            if col != row
        }
        for row in names
    }
    weighting = _WEIGHTING_NOTE.get(ranking.weighting, ranking.weighting)
    out = ['<section id="weighted"><h2>Weighted pairwise win rate and Elo trajectory</h2>']
    battles = ranking.pair_battles
    counts = {row: {col: int(battles[code[row], code[col]]) for col in names} for row in names}
    out.append(heatmap(names, rates, counts, css_id="weighted-heatmap"))
    out.append(
        _p(
            f"Row beats column, each review weighted by its reviewer's weight ({weighting}): "
            "the pair shares Bradley-Terry is fitted on (ties count half); n: battles counted."
        )
    )
    out.append("<h3>Elo trajectory</h3>")
    trajectory = ranking_trajectory(ranking)
    if trajectory is None:
        out.append(_p("No Elo trajectory: Elo was not computed (--elo-orders 0) or no battle."))
    else:
        battled = ranking.counts.battles
        lines = {
            name: [float(v) for v in trajectory.rating[:, code[name]]]
            for name in names
            if battled[code[name]] > 0
        }
        steps = [int(v) for v in trajectory.steps]
        out.append(trajectory_chart(steps, lines, css_id="elo-trajectory"))
        out.append(
            _p(
                "Each model's weighted Elo after the first reviews of the sequence, averaged "
                f"over the same {trajectory.orders} fixed review orders as the Elo column "
                "(at its final weights), so each line ends at the model's Elo; where the "
                "lines settle, more reviews no longer move the ratings."
            )
        )
    out.append("</section>")
    return "".join(out)


def _reviewers(data: ReportData) -> str:
    lb = data.leaderboard
    weights = lb["reviewer_weights"]
    agreement = {r["reviewer"]: r for r in lb.get("agreement", {}).get("reviewers", [])}
    header = ["reviewer", *(label for _, label, _ in _REVIEWER_COLUMNS)]
    if agreement:
        header += ["human accuracy", "human kappa"]
    rows = []
    for d in lb["diagnostics"]["reviewers"]:
        values = dict(d)
        values["weight"] = weights.get(d["reviewer"])
        cells = [d["reviewer"]]
        for key, _, digits in _REVIEWER_COLUMNS:
            value = values.get(key)
            cells.append(f"{value:+.3f}" if key == "self_preference" and value else "")
            if not cells[-1]:
                cells[-1] = _fmt(value, digits)
        if agreement:
            a = agreement.get(d["reviewer"], {})
            accuracy = _fmt(a.get("accuracy"))
            interval = _interval(a, "accuracy", 2)
            cells += [
                accuracy if interval is None else f"{accuracy} [{interval}]",
                _fmt(a.get("kappa")),
            ]
        rows.append(cells)
    notes = [
        "weight: PeerRank weight; pos A: share of decisive verdicts for the answer shown first; "
        "swap: share of battles judged in both orders whose verdicts agree; self: the win rate "
        "it gives its own answers minus the others' for them; longer wins: share of its "
        "decisive verdicts won by the longer answer; ties, invalid: shares of its verdicts.",
        f"Fleiss' kappa between reviewers: {_fmt(lb['diagnostics'].get('fleiss_kappa'))}.",
    ]
    out = ['<section id="reviewers-section"><h2>Reviewers</h2>']
    out.append(_table("reviewers", header, rows))
    out += [_p(n) for n in notes]
    if "agreement" in lb:
        a = lb["agreement"]
        w = a["weighted_majority"]
        out.append(
            _p(
                f"Agreement with human labels over {a['battles']} labelled battles; weighted "
                f"majority of the reviewers: accuracy {_fmt(w['accuracy'])}, "
                f"kappa {_fmt(w['kappa'])}."
            )
        )
    out.append("</section>")
    return "".join(out)


def _history(data: ReportData) -> str:
    if not data.history:
        if data.history_note is None:
            return ""
        return f'<section id="history-section"><h2>History</h2>{_p(data.history_note)}</section>'
    out = ['<section id="history-section"><h2>History</h2>']
    if len(data.history) < 2:
        out.append(_p("One snapshot so far: lines appear after the next completed run."))
    else:
        labels = [
            f"#{k} {time.strftime('%m-%d %H:%M', time.localtime(s['at']))}"
            for k, s in enumerate(data.history, start=1)
        ]
        names = list(dict.fromkeys(m for s in data.history for m in s["models"]))
        lines = {name: [s["models"].get(name) for s in data.history] for name in names}
        out.append(line_chart(labels, lines, css_id="history"))
        out.append(_p("Bradley-Terry rating of each model at each completed run."))
    out.append("</section>")
    return "".join(out)


def _by_category(data: ReportData) -> str:
    """`--by category`: each model's Bradley-Terry rating, rank and interval in each category;
    with a baseline (`--baseline MODEL` or `per-category`), each category's win rates against
    its baseline (the JSON `by_category[].vs_baseline`)."""
    rankings = _board(data).by_category
    if not rankings:
        return ""
    header = ["model", *(f"{c.category} ({c.questions}q)" for c in rankings)]
    names = list(dict.fromkeys(m["model"] for c in rankings for m in c.models))
    rows = []
    for name in names:
        cells = [name]
        for c in rankings:
            found = next((m for m in c.models if m["model"] == name), None)
            bt = None if found is None else found.get("bt")
            if found is None or bt is None:
                cells.append("-")
                continue
            interval = _bounds(found.get("bt_ci_low"), found.get("bt_ci_high"), 0)
            cells.append(
                f"{bt:.0f} (#{found['rank']})" + ("" if interval is None else f" {interval}")
            )
        rows.append(cells)
    against = [c for c in rankings if c.baseline is not None and c.vs_baseline is not None]
    out = ['<section id="by-category"><h2>By category</h2>']
    out.append(_table("by-category-table", header, rows))
    out.append(
        _p(
            "Each question category ranked on its own reviews: Bradley-Terry rating (rank) and "
            "its 95% interval over the category's questions"
            + ("; below, each category's win rates against its baseline." if against else ".")
        )
    )
    for k, c in enumerate(rankings, start=1):
        if c.baseline is None or c.vs_baseline is None:
            continue
        head, body = _vs_baseline_rows(c.vs_baseline)
        plural = "" if c.questions == 1 else "s"
        out.append(
            f"<h3>{_e(c.category)} ({c.questions} question{plural}): win rate against "
            f"{_e(c.baseline)}</h3>"
        )
        out.append(_table(f"category-baseline-{k}", head, body))
    if against:
        out.append(_p(_VS_BASELINE_NOTE))
    out.append("</section>")
    return "".join(out)


_VS_BASELINE_NOTE = (
    "Weighted mean share of the win (graded verdicts as given); discrete: wins plus "
    "half the ties over the battles; interval: bootstrap over questions; average "
    "answer length in characters, where the answers are known."
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _vs_baseline_rows(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The header and cells of JSON `vs_baseline` rows (percent, with the interval)."""
    body = [
        [
            row["model"],
            _pct(row["win_rate"]),
            "-"
            if row["ci_low"] is None or row["ci_high"] is None
            else f"{_pct(row['ci_low'])}-{_pct(row['ci_high'])}",
            _pct(row["discrete_win_rate"]),
            str(row["n"]),
            "-" if row["avg_length"] is None else f"{row['avg_length']:.0f}",
        ]
        for row in rows
    ]
    return ["model", "win rate %", "95% CI", "discrete %", "n", "avg length"], body


def _baseline(data: ReportData) -> str:
    """`--baseline MODEL`: each model's win rate against it (percent, with its interval)."""
    rows = data.leaderboard.get("vs_baseline")
    if rows is None:
        return ""
    header, body = _vs_baseline_rows(rows)
    note = ""
    if "length_control" in data.leaderboard:  # --length-control: two more columns
        header += ["LC win rate %", "LC 95% CI"]
        for line, row in zip(body, rows, strict=True):
            line.append(_pct(row["lc_win_rate"]))
            line.append(
                "-"
                if row["lc_ci_low"] is None or row["lc_ci_high"] is None
                else f"{_pct(row['lc_ci_low'])}-{_pct(row['lc_ci_high'])}"
            )
        source = data.leaderboard["length_control"].get("difficulty", {})
        where = (
            f"the table {source.get('file')} (reference: "
            f"{', '.join(source.get('reference_models', []))})"
            if source.get("source") == "table"
            else "none (every question 0)"
        )
        note = (
            " LC: length-controlled, the win rate predicted at the baseline's length by a "
            "logistic fit of each model alone on its strength, the tanh of its standardised "
            f"length difference and fixed question difficulties (difficulties: {where}); its "
            "interval: bootstrap over questions, refitted each round."
        )
    return (
        f'<section id="baseline"><h2>Win rate against {_e(data.leaderboard["baseline"])}</h2>'
        + _table("baseline-table", header, body)
        + _p(_VS_BASELINE_NOTE + note)
        + "</section>"
    )


def _discussion(data: ReportData) -> str:
    """The sections of the stages whose blocks are text tables (PeerDiscussion)."""
    out = []
    for part in all_parts():
        board = part.board
        block = None if board is None else _board(data).stage_block(board.key)
        if board is None or block is None or not board.title:
            continue
        out.append(f'<section id="{_e(board.key)}"><h2>{_e(board.title)}</h2>')
        for t in board.text(block).tables:
            out.append(f"<h3>{_e(t.title)}</h3>")
            out.append(_table("", t.header, t.rows))
            out += [_p(n) for n in t.notes]
        out.append("</section>")
    return "".join(out)


def _batcheval(data: ReportData) -> str:
    block = _board(data).batcheval
    if block is None:
        return ""
    against = str(block["against"])
    rows = [
        [
            r["model"],
            r["criterion"],
            _fmt(r["mean"], 2),
            "-" if r["ci_low"] is None else f"{r['ci_low']:.2f}-{r['ci_high']:.2f}",
            str(r["answers"]),
            str(r["unscored_answers"]),
        ]
        for r in block["rows"]
    ]
    corr = [
        [c["criterion"], str(c["n"]), _fmt(c["pearson"]), _fmt(c["spearman"]), _fmt(c["kendall"])]
        for c in block["correlation"]
    ]
    return (
        '<section id="batcheval"><h2>BatchEval</h2>'
        + _table(
            "batcheval-scores",
            ["model", "criterion", "mean", "95% CI", "answers", "unscored"],
            rows,
            text_columns=2,
        )
        + _p(
            f"Scorers: {', '.join(block['scorers'])}. Mean answer score over rounds and "
            "scorers, bootstrap interval over answers."
        )
        + f"<h3>Against the {_e(_RANKING_LABELS.get(against, against))} ranking</h3>"
        + _table("", ["criterion", "models", "Pearson", "Spearman", "Kendall"], corr)
        + "</section>"
    )


def _calls(data: ReportData) -> str:
    if data.reviews_files and not data.calls:  # imported judgments: no calls were made
        return ""
    rows = [
        [
            c["table"],
            str(c["calls"]),
            str(c["ok"]),
            str(c["invalid"]),
            str(c["failed"]),
            str(c["tokens_in"]),
            _count(c.get("tokens_cache_read")),
            _count(c.get("tokens_cache_write")),
            str(c["tokens_out"]),
            _count(c.get("tokens_reasoning")),
            f"{c['cost_usd']:.4f}",
        ]
        for c in data.calls
    ]
    total = data.leaderboard.get("cost_usd")
    return (
        '<section id="calls"><h2>Calls and cost</h2>'
        + _table(
            "calls-table",
            [
                "stage",
                "calls",
                "ok",
                "invalid",
                "failed",
                "tokens in",
                "of which cache read",
                "of which cache write",
                "tokens out",
                "of which reasoning",
                "cost USD",
            ],
            rows,
        )
        + ("" if total is None else _p(f"Total cost: ${total:.4f}"))
        + _p(
            "Cost prices cache reads and writes at the provider's cache prices and "
            "batch calls at its batch prices; '-': the provider reported no such tokens."
        )
        + "</section>"
    )


def _count(value: int | None) -> str:
    """A token count, or '-' when it was not reported."""
    return "-" if value is None else str(value)


def _turns(turns: Sequence[str]) -> str:
    if not turns:
        return _p("(no text)")
    if len(turns) == 1:
        return f"<pre>{_e(turns[0])}</pre>"
    return "".join(
        f"<h5>turn {k}</h5><pre>{_e(text)}</pre>" for k, text in enumerate(turns, start=1)
    )


def _answer(label: str, answer: Mapping[str, Any] | None) -> str:
    if answer is None:
        return f"<div><h4>{_e(label)}: not logged</h4></div>"
    status = "" if answer["status"] == "ok" else _p(f"{answer['status']}: {answer['error']}")
    return (
        f"<div><h4>{_e(label)}: {_e(answer['model'])}</h4>{status}{_turns(answer['turns'])}</div>"
    )


def _battle(k: int, b: Mapping[str, Any]) -> str:
    q = b["question"]
    first, second = b["answers"]
    names = [a["model"] if a else "?" for a in (first, second)]
    votes = b["votes"]
    category = f" ({q['category']})" if q["category"] else ""
    summary = (
        f"Question {q['id']}{category}: "
        f"{names[0]} vs {names[1]}; votes {votes['first']} / {votes['second']} / "
        f"{votes['ties']} ties (dispute {b['dispute']:.2f})"
    )
    out = [f'<details class="battle" id="battle-{k}"><summary>{_e(summary)}</summary>']
    out.append("<h4>Question</h4>" + _turns(q["turns"]))
    out.append(
        '<div class="answers">' + _answer("first", first) + _answer("second", second) + "</div>"
    )
    out.append(f"<h4>Reviews ({len(b['reviews'])})</h4>")
    for r in b["reviews"]:
        head = f"{r['reviewer']} judged A = {r['model_a']}, B = {r['model_b']}: {r['verdict']}"
        body = "" if r["text"] is None else f"<pre>{_e(r['text'])}</pre>"
        error = "" if not r["error"] else _p(r["error"], "failed")
        out.append(f'<div class="review"><strong>{_e(head)}</strong>{body}{error}</div>')
    for d in b["discussions"]:
        outcome = d["outcome"] or "in progress"
        verdict = f", verdict {d['verdict']}" if d["verdict"] else ""
        title = (
            f"Discussion of {d['leader']} and {d['follower']} (A = {d['model_a']}, "
            f"B = {d['model_b']}; {d['trigger']}): {outcome}{verdict}"
        )
        out.append(f"<h4>{_e(title)}</h4>")
        for t in d["turns"]:
            head = f"{t['kind']} {t['turn']}, {t['speaker']}: {t['preference'] or t['status']}"
            body = "" if t["text"] is None else f"<pre>{_e(t['text'])}</pre>"
            out.append(f'<div class="turn"><strong>{_e(head)}</strong>{body}</div>')
    out.append("</details>")
    return "".join(out)


def _battles(data: ReportData) -> str:
    if not data.battles:
        return ""
    return (
        '<section id="battles"><h2>Disputed battles</h2>'
        + _p(
            "The battles whose reviewers disagreed most, each with both answers, every review "
            "(both orders) and any discussion. Votes: for the first answer / for the second / "
            "ties; dispute: one minus the share of the most common vote. Browse every battle "
            "with `arena view`."
        )
        + "".join(_battle(k, b) for k, b in enumerate(data.battles, start=1))
        + "</section>"
    )


def _source(data: ReportData) -> str:
    """The directory the report reads, or the shard directories it reads as one tournament."""
    if data.reviews_files:
        return "Judgments from " + ", ".join(str(f) for f in data.reviews_files)
    if len(data.directories) > 1:
        names = ", ".join(str(d) for d in data.directories)
        return f"Run directories {names} (read as one tournament)"
    return f"Run directory {data.directory}"


def _single_grades(data: ReportData) -> str:
    """MT-bench single-answer grades: FastChat's single-mode table (the leaderboard JSON)."""
    table = data.leaderboard
    rows = [
        [
            _fmt(row["rank"]),
            row["model"],
            _fmt(row["score"], 4),
            _fmt(row["turn_1"], 4),
            _fmt(row["turn_2"], 4),
            _fmt(row["n"]),
        ]
        for row in table["models"]
    ]
    judges = ", ".join(table["judges"])
    return (
        '<section id="single-grades-section"><h2>MT-bench single-answer grades</h2>'
        + _p(
            f"{table['grades']} grades of {table['questions']} questions by {judges}: each "
            "answer graded 1-10 on its own (no battles, so no ratings, intervals or pairwise "
            "figures)."
        )
        + _table(
            "single-grades",
            ["#", "model", "score", "turn 1", "turn 2", "grades"],
            rows,
            text_columns=2,
        )
        + _p(
            "score: mean grade (1-10) over every turn (FastChat's Average, the MT-bench "
            "score); turn 1, turn 2: the mean over that turn's grades; grades: those counted."
        )
        + "</section>"
    )


def _document(title: str, nav: str, body: str) -> str:
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(f'arena report: {title}')}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>{_e(f'arena report: {title}')}</h1>"
        f"<nav>{nav}</nav>" + body + "</body></html>\n"
    )


def _warnings(warnings: Iterable[str]) -> str:
    return "".join(_p(f"Warning: {w}", "warning") for w in warnings)


def render_report(data: ReportData) -> str:
    """The whole report as one HTML document."""
    lb = data.leaderboard
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(data.generated_at))
    if data.board is None:  # single-answer grades: their table alone
        return _document(
            data.title,
            '<a href="#single-grades-section">Single grades</a>',
            _p(f"{_source(data)}; report generated {stamp}.", "meta")
            + _warnings(lb.get("warnings", []))
            + _single_grades(data),
        )
    counts = lb["counts"]
    counted = counts["reviews"] - counts["invalid"] - counts["failed"]
    intro = [
        _p(f"{_source(data)}; report generated {stamp}.", "meta"),
        _p(
            f"{counts['reviews']} reviews: {counted} counted as battles, {counts['invalid']} "
            f"invalid and {counts['failed']} failed (never counted)."
        ),
    ]
    warnings = _warnings([*lb.get("warnings", []), *data.notes])
    sections = [
        _leaderboard(data) + _baseline(data),
        _charts(data),
        _pairwise(data) + _weighted(data),
        _reviewers(data),
        _history(data),
        _by_category(data),
        _discussion(data),
        _batcheval(data),
        _calls(data),
        _battles(data),
    ]
    nav = "".join(
        f'<a href="#{target}">{label}</a>'
        for target, label, section in (
            ("leaderboard-section", "Leaderboard", sections[0]),
            ("charts", "Ratings", sections[1]),
            ("pairwise", "Pairwise", sections[2]),
            ("reviewers-section", "Reviewers", sections[3]),
            ("history-section", "History", sections[4]),
            ("by-category", "By category", sections[5]),
            ("discussion", "Discussion", sections[6]),
            ("batcheval", "BatchEval", sections[7]),
            ("calls", "Calls", sections[8]),
            ("battles", "Battles", sections[9]),
        )
        if section
    )
    return _document(data.title, nav, "".join(intro) + warnings + "".join(sections))
