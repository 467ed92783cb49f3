"""`arena leaderboard --by category`: a ranking within each question category."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from arena.cli import main
from arena.store import RunLog
from tests.conftest import small_tournament

FAST = ["--bootstrap", "0", "--elo-orders", "0"]


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _run_with_categories(tmp: Path) -> Path:
    path = small_tournament(tmp, models=3, questions=6)
    rows = [
        {"question_id": i, "category": "math" if i < 4 else "writing", "turns": [f"Q{i}?"]}
        for i in range(6)
    ]
    (tmp / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _arena("run", str(path)).exit_code == 0
    return tmp / "out"


def test_by_category_in_json_table_and_markdown(tmp_path: Path) -> None:
    out = _run_with_categories(tmp_path)
    result = _arena("leaderboard", str(out), "--by", "category", "--format", "json", *FAST)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by = data["by_category"]
    assert set(by) == {"math", "writing"}
    assert by["math"]["questions"] == 4 and by["writing"]["questions"] == 2
    # 3 contestants: 6 ordered pairs x 3 reviewers per question.
    assert by["math"]["reviews"] == 4 * 18 and by["writing"]["reviews"] == 2 * 18
    assert [m["rank"] for m in by["math"]["models"]] == [1, 2, 3]
    assert {m["model"] for m in by["writing"]["models"]} == {"m0", "m1", "m2"}
    wins = sum(m["wins"] for c in by.values() for m in c["models"])
    assert wins == sum(m["wins"] for m in data["models"])  # the categories partition the battles
    table = _arena("leaderboard", str(out), "--by", "category", *FAST)
    assert "By category" in table.stdout and "math (4q)" in table.stdout
    markdown = _arena("leaderboard", str(out), "--by", "category", "--format", "markdown", *FAST)
    assert "## By category" in markdown.stdout
    plain = json.loads(_arena("leaderboard", str(out), "--format", "json", *FAST).stdout)
    assert "by_category" not in plain
    csv_text = _arena("leaderboard", str(out), "--by", "category", "--format", "csv", *FAST)
    lines = csv_text.stdout.splitlines()
    assert lines[0].startswith("category,rank,model,")
    assert sum(line.startswith("(all),") for line in lines) == 3
    assert sum(line.startswith("math,") for line in lines) == 3
    report = _arena("report", str(out), "--by", "category", "-o", str(tmp_path / "r.html"))
    assert report.exit_code == 0, report.output
    html = (tmp_path / "r.html").read_text()
    assert '<section id="by-category">' in html and "math (4q)" in html


def test_by_category_of_an_imported_reviews_file(tmp_path: Path) -> None:
    out = _run_with_categories(tmp_path)
    reviews = RunLog(out).read("reviews")
    lines = [
        {
            "question_id": q,
            "model_a": a,
            "model_b": b,
            "reviewer": r,
            "verdict": v,
            "category": "even" if int(q) % 2 == 0 else "odd",
        }
        for q, a, b, r, v in reviews.select(
            "question_id", "model_a", "model_b", "reviewer", "verdict"
        ).iter_rows()
    ]
    file = tmp_path / "judgments.jsonl"
    file.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = _arena(
        "leaderboard", "--reviews", str(file), "--by", "category", "--format", "json", *FAST
    )
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)["by_category"]) == {"even", "odd"}
    no_column = tmp_path / "plain.jsonl"
    no_column.write_text(
        "".join(json.dumps({k: v for k, v in x.items() if k != "category"}) + "\n" for x in lines)
    )
    bad = _arena("leaderboard", "--reviews", str(no_column), "--by", "category", *FAST)
    assert bad.exit_code == 2 and "carry no category" in bad.stderr
