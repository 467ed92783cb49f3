"""`arena report --reviews FILE`: the report of imported judgments alone, no run directory."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from arena.cli import main

FAST = ["--elo-orders", "0", "--bootstrap", "20"]
SCRIPT = "<script>alert(1)</script>"


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _annotation(model: str, k: int, preference: float | None) -> dict[str, Any]:
    return {
        "instruction": f"Question {k}?",
        "output_1": f"the reference answer {k}",
        "generator_1": "ref",
        "dataset": "helpful_base" if k < 2 else "oasst",
        "output_2": f"{model} says {SCRIPT} to question {k}",
        "generator_2": model,
        "annotator": "weighted_alpaca_eval_gpt4_turbo",
        "preference": preference,
    }


def alpacaeval_file(tmp: Path) -> Path:
    """AlpacaEval annotations of two models against `ref`; one battle disputed in full."""
    rows = [
        _annotation("m1", 0, 1.8),
        _annotation("m1", 1, 1.5),
        _annotation("m1", 2, 1.0),
        _annotation("m2", 0, 1.2),
        _annotation("m2", 1, 2.0),
        _annotation("m2", 2, None),
    ]
    rows.append({**_annotation("m1", 0, 1.0), "annotator": "second_judge"})
    path = tmp / "annotations.json"
    path.write_text(json.dumps(rows, indent=1))
    return path


def test_report_of_imported_judgments(tmp_path: Path) -> None:
    source = alpacaeval_file(tmp_path)
    out = tmp_path / "alpaca.html"
    result = _arena(
        "report",
        "--reviews",
        str(source),
        "--baseline",
        "ref",
        "--by",
        "category",
        "-o",
        str(out),
        *FAST,
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert f"Judgments from {source}" in page
    for section in (
        "leaderboard-section",
        "baseline",
        "pairwise",
        "reviewers-section",
        "by-category",
    ):
        assert f'<section id="{section}"' in page
    # No run: no history, no calls.
    assert 'id="history-section"' not in page and 'id="calls"' not in page
    # The disputed battle (m1 on question 0: two judges disagree) with both answers, escaped.
    battles = page[page.index('<section id="battles"') :]
    assert "the reference answer 0" in battles and "m1 says" in battles
    assert SCRIPT not in page and "&lt;script&gt;" in battles
    assert "second_judge" in battles and "weighted_alpaca_eval_gpt4_turbo" in battles
    # The win rate against ref: m1's shares 0.8, 0.5, 0 and 0 (the second judge).
    rows = re.findall(r"<tr><td>(m\d)</td><td class=\"num\">([\d.]+)</td>", page)
    assert ("m1", "32.50") in rows
    # The leaderboard's average answer length: m1's three distinct answers (one judged twice).
    board = page[
        page.index('id="leaderboard"') : page.index("</table>", page.index('id="leaderboard"'))
    ]
    assert '<th class="num">avg length</th>' in board
    m1_length = sum(len(f"m1 says {SCRIPT} to question {k}") for k in range(3)) / 3
    m1_row = board[board.index("<td>m1") :].split("</tr>")[0]
    assert m1_row.endswith(f'<td class="num">{m1_length:.0f}</td>')
    # Per category: rating, rank and the bootstrap interval.
    table = page[page.index('id="by-category-table"') :].split("</table>")[0]
    assert re.search(r"<td>m1</td><td class=\"num\">\d+ \(#\d\) \d+-\d+</td>", table), table


def test_report_takes_several_files_and_a_forced_format(tmp_path: Path) -> None:
    first = tmp_path / "a.jsonl"
    second = tmp_path / "b.jsonl"
    first.write_text(
        json.dumps({"question_id": 1, "model_a": "x", "model_b": "y", "winner": "model_a"}) + "\n"
    )
    second.write_text(
        json.dumps({"question_id": 2, "model_a": "y", "model_b": "x", "winner": "tie"}) + "\n"
    )
    out = tmp_path / "crowd.html"
    result = _arena(
        "report",
        "--reviews",
        str(first),
        "--reviews",
        str(second),
        "--reviews-format",
        "chatbot-arena",
        "-o",
        str(out),
        *FAST,
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "2 reviews: 2 counted as battles" in page and "crowd" in page


def test_report_reviews_bad_input(tmp_path: Path) -> None:
    source = alpacaeval_file(tmp_path)
    run_dir = tmp_path / "run"
    (run_dir / "log").mkdir(parents=True)
    both = _arena("report", str(run_dir), "--reviews", str(source), "-o", str(tmp_path / "x.html"))
    assert both.exit_code == 2 and "give no run directory" in both.output
    no_out = _arena("report", "--reviews", str(source))
    assert no_out.exit_code == 2 and "-o FILE" in no_out.output
    neither = _arena("report")
    assert neither.exit_code == 2 and "--reviews FILE" in neither.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"question_id": 1, "model_a": "x", "model_b": "y", "reviewer": "r", "score": 7}\n'
    )
    wrong = _arena("report", "--reviews", str(bad), "-o", str(tmp_path / "y.html"))
    assert wrong.exit_code == 2
    assert f"{bad}: line 1: unknown score" in wrong.output
    assert not (tmp_path / "y.html").exists()
