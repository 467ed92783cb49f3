"""`arena status` and `arena plan` draw their tables with polars (arena.cli._table):
every cell whole, names to the left, numbers to the right, the total last."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli._table import box_table
from tests.conftest import finished_small_run


def _body(text: str) -> list[list[str]]:
    """The table's rows of cells (header first), borders and padding taken off."""
    rows = []
    for line in text.splitlines():
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.strip("│").split("┆")])
    return rows


def test_cells_are_whole_and_aligned() -> None:
    long_name = "provider-" + "x" * 300
    text = box_table("T", ["name", "count"], [["a", "5"], [long_name, "12345"]], left=("name",))
    lines = text.splitlines()
    assert lines[0] == "T"
    assert _body(text) == [["name", "count"], ["a", "5"], [long_name, "12345"]]
    row = next(line for line in lines if line.startswith("│ a "))
    assert row.endswith("     5 │")  # right-aligned under "count"/"12345"
    assert "│ a " + " " * (len(long_name) - 1) in row  # left-aligned, padded to the longest


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return finished_small_run(tmp_path_factory.mktemp("tables"), models=3, questions=2)


def test_status_table(small_run: tuple[Path, Path]) -> None:
    _, out = small_run
    result = CliRunner().invoke(main, ["status", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"Status of {out} (plan from config)"
    rows = _body(result.output)
    header = rows[0]
    assert header == [
        "stage",
        "provider",
        "planned",
        "done",
        "invalid",
        "failed",
        "stale",
        "pending",
        "spent_usd",
    ]
    by_stage = {row[0]: dict(zip(header, row, strict=True)) for row in rows[1:]}
    # 3 models x 2 questions answers; 2 questions x 6 ordered pairs x 3 reviewers reviews.
    assert by_stage["answers"]["planned"] == "6"
    assert by_stage["reviews"]["planned"] == "36"
    assert by_stage["total"]["planned"] == "42"
    assert rows[-1][0] == "total"
    done = sum(
        int(by_stage[s]["done"]) + int(by_stage[s]["invalid"]) for s in ("answers", "reviews")
    )
    assert done == 42


def test_plan_table(small_run: tuple[Path, Path]) -> None:
    config, out = small_run
    result = CliRunner().invoke(main, ["plan", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = _body(result.output)
    header = rows[0]
    assert header[:2] == ["provider", "model"]
    models = [row for row in rows[1:] if row[0] != "total"]
    assert len(models) == 3
    total = dict(zip(header, rows[-1], strict=True))
    assert rows[-1][0] == "total"
    assert total["calls"] == "42" and total["pending"] == "0"
    assert total["est_cost_usd"].startswith("$")
