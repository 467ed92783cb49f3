"""`arena report DIR1 DIR2 ...`: the shard directories of one tournament as one HTML report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.htmlreport import build_report
from arena.report import LeaderboardOptions
from tests.conftest import small_tournament

FAST = ["--elo-orders", "5", "--bootstrap", "20"]
FAST_OPTIONS = LeaderboardOptions(elo_orders=5, bootstrap=20)


def arena(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def leaderboard_json(*dirs: Path) -> dict[str, Any]:
    code, out = arena("leaderboard", *map(str, dirs), *FAST, "--format", "json")
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return data


def report_rows(page: str) -> list[tuple[str, str]]:
    """(model, BT cell) of each row of the report's leaderboard table, in its order."""
    body = page.split('<table id="leaderboard">')[1].split("</table>")[0].split("<tbody>")[1]
    header = page.split('<table id="leaderboard">')[1].split("</thead>")[0]
    columns = re.findall(r"<th[^>]*>([^<]*)</th>", header)
    bt = columns.index("BT")
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", body):
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        rows.append((cells[1].removesuffix(" *"), cells[bt]))
    return rows


@pytest.fixture(scope="module")
def split_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """One tournament run whole, and the same tournament run in 3 shards."""
    tmp = tmp_path_factory.mktemp("split")
    path = small_tournament(tmp, models=3, questions=6, sim={"judge_noise": 0.8})
    code, out = arena("run", str(path), "--out", str(tmp / "whole"))
    assert code == 0, out
    shards = []
    for k in (1, 2, 3):
        shard = tmp / f"shard{k}"
        code, out = arena("run", str(path), "--shard", f"{k}/3", "--out", str(shard))
        assert code == 0, out
        shards.append(shard)
    return tmp / "whole", shards


@pytest.fixture(scope="module")
def other_tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory of another tournament (another seed: another config hash)."""
    tmp = tmp_path_factory.mktemp("other")
    path = small_tournament(tmp, models=3, questions=2)
    config = yaml.safe_load(path.read_text())
    config["seed"] = 99
    path.write_text(yaml.safe_dump(config))
    code, out = arena("run", str(path), "--out", str(tmp / "other"))
    assert code == 0, out
    return tmp / "other"


def test_report_of_three_shards_ranks_as_the_leaderboard(
    split_run: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    whole, shards = split_run
    target = tmp_path / "merged" / "report.html"
    code, out = arena("report", *map(str, shards), "-o", str(target), *FAST)
    assert code == 0, out
    assert str(target) in out
    page = target.read_text()
    rows = report_rows(page)
    merged = leaderboard_json(*shards)
    expected = [(m["model"], f"{m['bt']:.0f}") for m in merged["models"]]
    assert rows == expected
    # ... which is the ranking of the unsplit run.
    alone = leaderboard_json(whole)
    assert [m["model"] for m in alone["models"]] == [m["model"] for m in merged["models"]]
    assert merged["models"] == alone["models"]
    # Every shard directory is named, and the report says why it has no history.
    assert all(str(shard) in page for shard in shards)
    assert "read as one tournament" in page
    assert "each shard directory keeps its own" in page
    assert f"{merged['counts']['reviews']} reviews:" in page
    # No report is written into the shard directories.
    assert not any((shard / "report.html").exists() for shard in shards)


def test_report_data_of_shards_is_that_of_the_whole_run(
    split_run: tuple[Path, list[Path]],
) -> None:
    whole, shards = split_run
    merged = build_report(shards, options=FAST_OPTIONS, battles=5)
    alone = build_report(whole, options=FAST_OPTIONS, battles=5)
    assert merged.leaderboard["models"] == alone.leaderboard["models"]
    assert merged.leaderboard["counts"] == alone.leaderboard["counts"]
    assert merged.leaderboard["counts"]["reviews"] == 6 * 3 * 2 * 3
    assert merged.directories == tuple(shards) and merged.directory == shards[0]
    # The most disputed battles of all shards: those of the unsplit run, in its order.
    assert len(merged.battles) == len(alone.battles) == 5
    assert merged.battles == alone.battles
    # Calls and tokens of every shard added up: those of the unsplit run.
    assert merged.calls == alone.calls
    assert {c["table"] for c in merged.calls} == {"answers", "reviews"}
    # The history of a shard ranks that shard alone: the merged report has none.
    assert alone.history and not merged.history and merged.history_note is not None
    assert alone.history_note is None


def test_report_refuses_another_tournament(
    split_run: tuple[Path, list[Path]], other_tournament: Path, tmp_path: Path
) -> None:
    _, shards = split_run
    target = tmp_path / "r.html"
    code, out = arena("report", str(shards[0]), str(other_tournament), "-o", str(target), *FAST)
    assert code == 2
    assert (
        f"{other_tournament}: tournament.json: another tournament than {shards[0]} (config_hash"
        in out
    )
    assert not target.exists()


def test_report_refuses_what_is_not_one_tournament_of_run_directories(
    split_run: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, shards = split_run
    target = tmp_path / "r.html"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = arena("report", str(shards[0]), str(empty), "-o", str(target), *FAST)
    assert code == 2
    assert f"{empty}: not a run directory (no tournament.json, no log/)" in out
    code, out = arena("report", str(shards[0]), str(tmp_path / "gone"), "-o", str(target))
    assert code == 2 and f"{tmp_path / 'gone'}: no such run directory" in out
    code, out = arena("report", str(shards[0]), str(shards[0] / "."), "-o", str(target))
    assert code == 2 and "given twice" in out
    # Several directories make one report that belongs to none of them: -o is needed.
    code, out = arena("report", *map(str, shards), *FAST)
    assert code == 2 and "give the file to write with -o FILE" in out
    assert not target.exists()
    assert not any((shard / "report.html").exists() for shard in shards)


def test_one_directory_still_writes_its_own_report(split_run: tuple[Path, list[Path]]) -> None:
    whole, _ = split_run
    code, out = arena("report", str(whole), *FAST, "--battles", "0")
    assert code == 0, out
    page = (whole / "report.html").read_text()
    assert f"Run directory {whole};" in page
    assert [m for m, _ in report_rows(page)] == [
        m["model"] for m in leaderboard_json(whole)["models"]
    ]
