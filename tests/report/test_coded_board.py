"""A run directory's leaderboard reads its reviews coded (ids as digest bytes, names
as codes); the ratings are those of the reviews read as text and ranked as a frame."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict, rank_frame
from arena.rundir import current_rows
from arena.store import RunLog
from tests.conftest import small_tournament

OPTIONS = LeaderboardOptions(bootstrap=20, elo_orders=4, seed=5)


def test_coded_read_ranks_as_the_text_frame_with_stale_rows_and_style(tmp_path: Path) -> None:
    config = small_tournament(tmp_path, models=4, questions=5, sim={"answer_words": 30})
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(config), "--out", str(out)]).exit_code == 0
    # One model leaves the tournament and another changes: their old reviews stay in
    # the log, out of the plan, under the same names.
    data = yaml.safe_load(config.read_text())
    data["contestants"] = data["contestants"][:3]
    data["models"]["m1"]["sim"]["skill"] = 0.5
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    assert CliRunner().invoke(main, ["run", str(config), "--out", str(out)]).exit_code == 0

    log = RunLog(out)
    everything = log.read("reviews")
    reviews = current_rows(out, "reviews", everything)
    assert 0 < reviews.height < everything.height  # stale rows are in the log
    text = leaderboard_dict(
        rank_frame(
            reviews,
            source=str(out),
            options=OPTIONS,
            contestants=data["contestants"],
            reviewers=data["contestants"],
            answers=log.read("answers"),
        )
    )
    coded = leaderboard_dict(build_leaderboard(out, options=OPTIONS))
    assert coded["models"] == text["models"]  # style control's rating among them
    assert coded["counts"] == text["counts"]
    assert any(key.startswith("style") for key in coded["models"][0])
    lean = leaderboard_dict(build_leaderboard(out, options=OPTIONS, ratings_only=True))
    assert [m["bt"] for m in lean["models"]] == [m["bt"] for m in text["models"]]
    assert reviews.schema["id"] == pl.String  # (the frame ranked as text)


def test_question_and_models_taken_from_the_answers_equal_the_columns_read(
    tmp_path: Path,
) -> None:
    """With style control the leaderboard takes each review's question and models from the
    answers it judges instead of reading three columns; a review whose answer the log
    lacks sends it back to reading them, with the same board as the text frame's."""
    from arena.report._inputs import ANSWER_KEYS, CODED_COLUMNS, keys_from_answers

    config = small_tournament(tmp_path, models=3, questions=4, sim={"answer_words": 30})
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(config), "--out", str(out)]).exit_code == 0
    log = RunLog(out)
    answer_ids = ["answer_a_id", "answer_b_id"]
    rest = ["reviewer", "verdict", "status"]
    read = log.read_coded(
        "reviews", [*ANSWER_KEYS, *rest, *answer_ids], [*CODED_COLUMNS, *answer_ids]
    )
    lean = log.read_coded("reviews", [*rest, *answer_ids], [*rest, *answer_ids])
    answers = log.read("answers", columns=["question_id", "model"])
    keyed = keys_from_answers(lean, answers)
    assert keyed is not None
    for column in ANSWER_KEYS:
        assert keyed[column].dtype == read[column].dtype  # the same Enum, values in text order
        assert keyed[column].to_list() == read[column].to_list()
    assert keys_from_answers(lean, answers.slice(1)) is None  # one answer unknown

    # The answers gone from the log: the board reads the columns, as the text frame has them.
    for part in (out / "log" / "answers").glob("*.parquet"):
        part.unlink()
    for journal in (out / "log" / "answers").glob("*.jsonl*"):
        journal.unlink()
    reviews = current_rows(out, "reviews", log.read("reviews"))
    text = leaderboard_dict(rank_frame(reviews, source=str(out), options=OPTIONS))
    coded = leaderboard_dict(build_leaderboard(out, options=OPTIONS))
    assert [m["bt"] for m in coded["models"]] == [m["bt"] for m in text["models"]]
    assert coded["counts"] == text["counts"]


def test_a_finished_run_is_told_by_the_plan_fingerprint_and_stale_rows_by_the_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan file keeps the fingerprint of its review ids: a log holding exactly those
    ids is ranked without reading the plan's ids; one more (stale) id, or a plan
    written without fingerprints, sends the reading to the ids, with the same board."""
    import arena.rundir._planfile as planfile
    from arena.rundir import plan_fingerprint, read_plan, write_plan
    from arena.store import digest_fingerprint, digest_keys_of

    config = small_tournament(tmp_path, models=3, questions=4, sim={"answer_words": 30})
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(config), "--out", str(out)]).exit_code == 0
    plan = read_plan(out)
    assert plan is not None
    for stage in ("answers", "reviews"):
        ids = plan.filter(pl.col("stage") == stage)["id"]
        assert plan_fingerprint(out, stage) == digest_fingerprint(digest_keys_of(ids))
    assert plan_fingerprint(out, "discussions") == (0, 0, 0)  # a stage without calls
    coded = RunLog(out).read_coded("reviews", ["reviewer", "verdict"], ["reviewer", "verdict"])
    expected = leaderboard_dict(build_leaderboard(out, options=OPTIONS))

    reads: list[str] = []
    real_digests = planfile.plan_digests

    def counted(directory: Path, table: str) -> pl.Series | None:
        reads.append(table)
        return real_digests(directory, table)

    monkeypatch.setattr(planfile, "plan_digests", counted)
    assert current_rows(out, "reviews", coded).height == coded.height
    assert reads == []  # the fingerprint told: the plan's ids were not read
    import arena.store._log as store_log

    keyed: list[int] = []
    real_keys = store_log.keys_of_halves

    def keys_made(*args: object) -> pl.Series:
        keyed.append(1)
        return real_keys(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store_log, "keys_of_halves", keys_made)
    ratings = leaderboard_dict(build_leaderboard(out, options=OPTIONS, ratings_only=True))
    assert [m["bt"] for m in ratings["models"]] == [m["bt"] for m in expected["models"]]
    assert [m["elo"] for m in ratings["models"]] == [m["elo"] for m in expected["models"]]
    assert reads == [] and keyed == []  # the ratings alone: no id made at all
    build_leaderboard(out, options=OPTIONS)  # style control reads the answers' ids
    assert keyed == [1]

    # A plan that lacks one of the logged reviews: that row is stale, found on the ids.
    fewer = plan.filter(pl.col("id") != coded_text_id(out))
    write_plan(out, fewer)
    kept = current_rows(out, "reviews", coded)
    assert reads == ["reviews"] and kept.height == coded.height - 1

    # A plan file of an older arena (no fingerprints): the ids are read, nothing dropped.
    reads.clear()
    plan.write_parquet(out / "plan.parquet")
    assert plan_fingerprint(out, "reviews") is None
    assert current_rows(out, "reviews", coded).height == coded.height
    assert reads == ["reviews"]


def coded_text_id(out: Path) -> str:
    """The id of one logged review, as text."""
    return str(RunLog(out).read("reviews", columns=["status"])["id"][0])


def test_a_history_snapshot_loads_numba_after_reading_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena leaderboard` readies numba beside the reading of the log (speed); a run's
    history snapshot (`ratings_only`) does not, so that numba's memory is not added to
    the reading's at the end of a long run: the coding loads it when it needs it."""
    import arena.report._leaderboard as board

    config = small_tournament(tmp_path, models=3, questions=3)
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(config), "--out", str(out)]).exit_code == 0
    started: list[int] = []
    real = board.prefetch_kernels

    def prefetch(rows: Callable[[], int]) -> threading.Thread:
        started.append(rows())
        return real(rows)

    monkeypatch.setattr(board, "prefetch_kernels", prefetch)
    lean = leaderboard_dict(build_leaderboard(out, options=OPTIONS, ratings_only=True))
    assert started == []
    full = leaderboard_dict(build_leaderboard(out, options=OPTIONS))
    assert started == [3 * 3 * 2 * 3]  # every review of the log: a size hint
    assert [m["bt"] for m in lean["models"]] == [m["bt"] for m in full["models"]]
