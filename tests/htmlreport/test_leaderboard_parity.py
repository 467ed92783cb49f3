"""The HTML report shows what the leaderboard JSON shows (issue 47): MT-bench single-answer
grades, per-category baselines, the order `rank` follows, and every warning."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.htmlreport import build_report, render_report
from tests.report.test_bias_order import _rows as length_biased_rows

FAST = ["--elo-orders", "0", "--bootstrap", "0"]


class _Tables(HTMLParser):
    """Every table of a page with an id: its rows of cell texts (the header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.headings: list[str] = []
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ident = dict(attrs).get("id")
        if tag == "table" and ident:
            self._table = self.tables.setdefault(ident, [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag == "h3":
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._table is not None and self._cell is not None:
            self._table[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "h3" and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._heading):
            if part is not None:
                part.append(data)


def _tables(page: str) -> _Tables:
    parser = _Tables()
    parser.feed(page)
    return parser


def _arena(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _json_board(*args: str) -> dict[str, Any]:
    board: dict[str, Any] = json.loads(_arena("leaderboard", *args, "--format", "json"))
    return board


def _report(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "report.html"
    _arena("report", *args, "-o", str(out))
    return out.read_text(encoding="utf-8")


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _single_grades(path: Path) -> Path:
    """FastChat's `<judge>_single.jsonl`: two models, five questions, both turns; the
    grades of one question are -1 (FastChat read no rating in the judgment)."""
    grades = {"strong": (9, 8), "weak <b>": (6, 4)}
    rows = [
        {
            "question_id": q,
            "model": model,
            "judge": ["gpt-4", "single-v1" if turn == 1 else "single-v1-multi-turn"],
            "user_prompt": "...",
            "judgment": "Rating: [[x]]",
            "score": -1 if q == 85 else grades[model][turn - 1] + (q % 2),
            "turn": turn,
            "tstamp": 1.0,
        }
        for q in range(81, 86)
        for model in grades
        for turn in (1, 2)
    ]
    return _write(path, rows)


def test_single_answer_grades_report_fastchat_single_mode_table(tmp_path: Path) -> None:
    source = _single_grades(tmp_path / "gpt-4_single.jsonl")
    table = _json_board("--reviews", str(source))
    assert table["kind"] == "single-answer grades" and table["warnings"]
    page = _report(tmp_path, "--reviews", str(source))
    rows = _tables(page).tables["single-grades"]
    assert rows[0] == ["#", "model", "score", "turn 1", "turn 2", "grades"]
    assert rows[1:] == [
        [
            str(m["rank"]),
            m["model"],
            f"{m['score']:.4f}",
            f"{m['turn_1']:.4f}",
            f"{m['turn_2']:.4f}",
            str(m["n"]),
        ]
        for m in table["models"]
    ]
    assert [r[1] for r in rows[1:]] == ["strong", "weak <b>"]  # escaped, read back as text
    assert "weak <b>" not in page
    for warning in table["warnings"]:  # the -1 grades left out
        assert f"Warning: {html.escape(warning)}" in page
    assert f"{table['grades']} grades of {table['questions']} questions by gpt-4" in page
    assert "<script" not in page and 'id="leaderboard"' not in page
    # The package API: the same object as the JSON, and no ranked board.
    data = build_report(reviews_file=source)
    assert data.board is None and data.leaderboard == table
    assert render_report(data).count('<table id="single-grades">') == 1


@pytest.mark.parametrize(
    ("flag", "value"), [("--by", "category"), ("--baseline", "strong"), ("--human", "labels")]
)
def test_single_answer_grades_refuse_pairwise_options(
    tmp_path: Path, flag: str, value: str
) -> None:
    source = _single_grades(tmp_path / "gpt-4_single.jsonl")
    if flag == "--human":
        value = str(_write(tmp_path / "labels.jsonl", [{"question_id": 81, "winner": "tie"}]))
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        main, ["report", "--reviews", str(source), flag, value, "-o", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert f"{flag}: ranks pairwise judgments" in result.output
    assert "single-answer grades have no battles" in result.output
    assert not out.exists()


def _arena_hard_v2(root: Path) -> Path:
    """arena-hard v2.0's `model_judgment/<judge>/<model>.jsonl`: each question judged
    against its category's baseline (game 1 shows the baseline first)."""
    baselines = {"hard_prompt": "o3-mini-2025-01-31", "creative_writing": "gemini-2.0-flash-001"}
    wins, losses, ties = ("B>A", "A>B"), ("A>B", "B>A"), ("A=B", "A=B")
    judged = {
        "m1": [("h1", "hard_prompt", wins), ("h2", "hard_prompt", wins)]
        + [("h3", "hard_prompt", losses), ("c1", "creative_writing", ties)],
        "m2": [("h1", "hard_prompt", losses), ("h2", "hard_prompt", ties)]
        + [("h3", "hard_prompt", losses), ("c1", "creative_writing", wins)],
    }
    folder = root / "gpt-4.1"
    for model, items in judged.items():
        rows = [
            {
                "uid": uid,
                "category": category,
                "judge": "gpt-4.1",
                "model": model,
                "baseline": baselines[category],
                "games": [{"score": g1}, {"score": g2}],
            }
            for uid, category, (g1, g2) in items
        ]
        _write(folder / f"{model}.jsonl", rows)
    return folder


def test_per_category_baselines(tmp_path: Path) -> None:
    folder = _arena_hard_v2(tmp_path)
    args = ["--reviews", str(folder), "--baseline", "per-category", *FAST]
    by = _json_board(*args)["by_category"]
    page = _report(tmp_path, *args)
    parsed = _tables(page)
    compact = parsed.tables["by-category-table"]
    categories = sorted(by)  # the report lists categories as the JSON does
    assert categories == ["creative_writing", "hard_prompt"]
    assert compact[0] == ["model", *(f"{c} ({by[c]['questions']}q)" for c in categories)]
    cells = {row[0]: row[1:] for row in compact[1:]}
    for k, category in enumerate(categories):
        for m in by[category]["models"]:
            if m["bt"] is not None:
                assert cells[m["model"]][k].startswith(f"{m['bt']:.0f} (#{m['rank']})")
    # Each category's figures against its own baseline, in full.
    for k, category in enumerate(categories, start=1):
        part = by[category]
        heading = f"win rate against {part['baseline']}"
        assert any(h.startswith(category) and h.endswith(heading) for h in parsed.headings)
        rows = parsed.tables[f"category-baseline-{k}"]
        assert rows[0] == ["model", "win rate %", "95% CI", "discrete %", "n", "avg length"]
        assert [r[0] for r in rows[1:]] == [e["model"] for e in part["vs_baseline"]]
        for row, entry in zip(rows[1:], part["vs_baseline"], strict=True):
            assert row[1] == f"{100 * entry['win_rate']:.2f}"
            assert row[3] == f"{100 * entry['discrete_win_rate']:.2f}"
            assert row[4] == str(entry["n"])
    hard = {r[0]: r[1] for r in parsed.tables["category-baseline-2"][1:]}
    creative = {r[0]: r[1] for r in parsed.tables["category-baseline-1"][1:]}
    assert hard == {"m1": "66.67", "m2": "16.67"} and creative == {"m1": "50.00", "m2": "100.00"}
    assert "creative_writing (1 question): win rate against gemini-2.0-flash-001" in page
    assert "hard_prompt (3 questions): win rate against o3-mini-2025-01-31" in page


def test_a_style_controlled_order_is_named_with_the_raw_rank_beside(tmp_path: Path) -> None:
    source = _write(tmp_path / "long.jsonl", length_biased_rows(length_bias=3.0))
    board = _json_board("--reviews", str(source), *FAST)
    assert board["rank_by"] == "bt_style"
    page = _report(tmp_path, "--reviews", str(source), *FAST)
    assert "Order: style-controlled Bradley-Terry (rank_by: bt_style)" in page
    rows = _tables(page).tables["leaderboard"]
    header = rows[0]
    rank, model = header.index("#"), header.index("model")
    raw, raw_ci = header.index("BT #"), header.index("BT rank CI")
    assert "bt_rank" not in header and "bt_rank_low" not in header  # labelled, not raw keys
    assert len(rows) == 1 + len(board["models"])
    for row, m in zip(rows[1:], board["models"], strict=True):
        assert row[model] == m["model"]
        assert row[rank] == str(m["rank"])
        assert row[raw] == str(m["bt_rank"])
        assert row[raw_ci] == f"{m['bt_rank_low']}-{m['bt_rank_high']}"
    assert [r[raw] for r in rows[1:]] != [r[rank] for r in rows[1:]]  # the orders differ


def test_a_raw_order_says_so_and_has_no_second_rank(tmp_path: Path) -> None:
    source = _write(tmp_path / "plain.jsonl", length_biased_rows(length_bias=0.0))
    assert "rank_by" not in _json_board("--reviews", str(source), *FAST)
    page = _report(tmp_path, "--reviews", str(source), *FAST)
    assert "Order: Bradley-Terry: #, rank CI and beats next follow BT." in page
    assert "rank_by: bt_style" not in page
    header = _tables(page).tables["leaderboard"][0]
    assert "BT #" not in header and "BT rank CI" not in header


def _self_judged_twice(root: Path) -> Path:
    """A judge that competes (its battles are the only evidence), its file read twice."""
    winners = ["model_2", "model_2", "model_1", "tie", "model_2", "model_1"]
    rows = [
        {
            "question_id": q,
            "model_1": "small",
            "model_2": "judge",
            "g1_winner": w,
            "g2_winner": w if q % 2 else "tie",
            "judge": ["judge", "pair-v2"],
            "turn": 1,
        }
        for q, w in enumerate(winners, 1)
    ]
    folder = root / "judgments"
    _write(folder / "judge_pair.jsonl", rows)
    _write(folder / "rerun.jsonl", rows)
    return folder


@pytest.mark.parametrize("design", ["self-judged and repeated", "length-biased"])
def test_every_json_warning_is_in_the_report(tmp_path: Path, design: str) -> None:
    if design == "length-biased":
        source = _write(tmp_path / "long.jsonl", length_biased_rows(length_bias=3.0))
        expected = ["style effect"]
    else:
        source = _self_judged_twice(tmp_path)
        expected = ["repeat a review already read", "self-judged reviews by judge"]
    warnings = _json_board("--reviews", str(source), *FAST)["warnings"]
    for phrase in expected:
        assert any(phrase in w for w in warnings), (phrase, warnings)
    page = _report(tmp_path, "--reviews", str(source), *FAST)
    for warning in warnings:
        assert f'<p class="warning">Warning: {html.escape(warning)}</p>' in page
