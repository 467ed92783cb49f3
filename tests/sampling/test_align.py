"""`sampling: {align: cache}`: a round's units placed on shared cache prefixes, same pairs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml
from click.testing import CliRunner

import arena.sampling  # noqa: F401  (registers the `sampling` table read below)
from arena.cli import main
from arena.sampling import DesignFit, Grid, balanced_units, choose_round, select_round
from arena.store import RunLog


def _shared(grid: Grid, units: np.ndarray) -> int:
    """Reviews of one round whose (question, reviewer, first answer) an earlier one showed."""
    q, p, r = grid.split(units)
    i, j = grid.pair_members()
    cell = (q * grid.n_reviewers + r) * grid.n_contestants
    shown = np.unique(np.concatenate([cell + i[p], cell + j[p]]))
    return 2 * int(units.size) - int(shown.size)


def _fit(c: int, n_r: int) -> DesignFit:
    rating = 1000.0 - 15.0 * np.arange(c)
    p = 1.0 / (1.0 + np.exp(-(rating[:, None] - rating[None, :]) / 40.0))
    return DesignFit(
        rating=rating,
        low=rating - 30,
        high=rating + 30,
        p_above=p,
        weights=np.full(n_r, 1.0 / n_r),
        battles=np.zeros(c, dtype=np.int64),
        reliability=np.linspace(0.4, 0.9, n_r),
        reviewer_as_contestant=np.arange(n_r, dtype=np.int64),
    )


def _pair_counts(grid: Grid, units: np.ndarray) -> np.ndarray:
    _, p, _ = grid.split(units)
    return np.bincount(p, minlength=grid.n_pairs)


def test_aligned_round_keeps_each_pairs_units_and_coverage_and_shares_prefixes() -> None:
    grid = Grid(n_questions=16, n_contestants=8, n_reviewers=8)
    seed = balanced_units(grid, 180, np.random.default_rng(0))
    selected = np.zeros(grid.size, dtype=np.bool_)
    selected[seed] = True
    fit = _fit(8, 8)
    plain = choose_round(grid, selected, fit, 120, np.random.default_rng(1))
    aligned = choose_round(grid, selected, fit, 120, np.random.default_rng(1), align=True)
    again = choose_round(grid, selected, fit, 120, np.random.default_rng(1), align=True)
    assert (aligned == again).all()  # deterministic given the generator
    assert not selected[aligned].any() and np.unique(aligned).size == aligned.size
    # The same units per pair; only the questions (and tied reviewers) move.
    assert (_pair_counts(grid, plain) == _pair_counts(grid, aligned)).all()
    # Coverage stays balanced inside every pair: no question judged twice more than another.
    q, p, _ = grid.split(np.concatenate([seed, aligned]))
    cover = np.zeros((grid.n_pairs, grid.n_questions), dtype=np.int64)
    np.add.at(cover, (p, q), 1)
    assert (cover.max(axis=1) - cover.min(axis=1) <= 1).all()
    # Far more reviews find their prefix already shown in the round.
    assert _shared(grid, aligned) >= 3 * max(_shared(grid, plain), 1)
    assert _shared(grid, aligned) >= 0.3 * 2 * aligned.size


def test_align_off_is_the_plain_design_and_a_seed_round_aligns_too() -> None:
    grid = Grid(n_questions=10, n_contestants=6, n_reviewers=6)
    names = [f"m{k}" for k in range(6)]
    empty = pl.DataFrame(
        schema={
            "question_id": pl.Utf8,
            "model_a": pl.Utf8,
            "model_b": pl.Utf8,
            "reviewer": pl.Utf8,
            "verdict": pl.Utf8,
        }
    )
    selected = np.zeros(grid.size, dtype=np.bool_)

    def first(align: bool | None) -> np.ndarray:
        extra: dict[str, Any] = {} if align is None else {"align": align}
        return select_round(
            grid,
            selected,
            empty,
            names,
            names,
            left=200,
            seed_units=90,
            round_units=40,
            adaptive=True,
            rng=np.random.default_rng([4, 0]),
            fit_seed=4000,
            **extra,
        ).units

    default, off, on = first(None), first(False), first(True)
    assert (default == off).all()
    assert (_pair_counts(grid, on) == _pair_counts(grid, off)).all()
    assert _shared(grid, on) > 2 * _shared(grid, off)


def _write(root: Path, align: str | None, strategy: str = "adaptive") -> Path:
    models = {
        f"m{i}": {
            "provider": "sim",
            "sim": {"skill": round(0.3 * (6 - i), 3), "answer_noise": 0.3, "judge_noise": 0.5},
        }
        for i in range(6)
    }
    (root / "q.jsonl").write_text(
        "".join(json.dumps({"id": f"q{k}", "turns": [f"Question {k}?"]}) + "\n" for k in range(12))
    )
    sampling: dict[str, Any] = {"strategy": strategy, "budget": 0.15, "rounds": 3}
    if align is not None:
        sampling["align"] = align
    cfg = {
        "name": "aligned",
        "seed": 9,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 8}}},
        "models": models,
        "contestants": list(models),
        "sampling": sampling,
    }
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _run(path: Path) -> tuple[int, dict[str, Any], str]:
    """`arena run --json` in this process: exit code, summary line, stderr."""
    result = CliRunner().invoke(main, ["run", str(path), "--json"])
    lines = result.stdout.strip().splitlines()
    return result.exit_code, (json.loads(lines[-1]) if lines else {}), result.stderr


def _shared_in_log(out: Path) -> tuple[int, pl.DataFrame]:
    """Reviews in the log whose (round, question, reviewer, first answer) came before."""
    log = RunLog(out)
    units = log.read("sampling")
    rounds = pl.concat(
        [
            units.select(pl.col("review_ab_id").alias("id"), "round"),
            units.select(pl.col("review_ba_id").alias("id"), "round"),
        ]
    )
    reviews = log.read("reviews").join(rounds, on="id")
    prefixes = reviews.group_by("round", "question_id", "reviewer", "model_a").len()
    return int((prefixes["len"] - 1).sum()), units


def test_a_run_with_align_cache_shows_more_shared_prefixes_for_the_same_calls(
    tmp_path: Path,
) -> None:
    found: dict[str, tuple[int, dict[str, Any], pl.DataFrame]] = {}
    for align in ("none", "cache"):
        root = tmp_path / align
        root.mkdir()
        code, summary, err = _run(_write(root, align))
        assert code == 0, err
        shared, units = _shared_in_log(root / "out")
        found[align] = (shared, summary["sampling"], units)
    (plain, s_plain, u_plain), (aligned, s_aligned, u_aligned) = found["none"], found["cache"]
    assert s_aligned["judged_review_calls"] == s_plain["judged_review_calls"]
    assert s_aligned["rounds"] == s_plain["rounds"]

    # The seed round (before any verdict) has the same units per pair either way.
    def seed_pairs(units: pl.DataFrame) -> pl.DataFrame:
        return (
            units.filter(pl.col("round") == 0)
            .group_by("model_a", "model_b")
            .len()
            .sort("model_a", "model_b")
        )

    assert seed_pairs(u_plain).equals(seed_pairs(u_aligned))
    assert aligned > 2 * max(plain, 1)


@pytest.mark.parametrize(
    ("sampling", "message"),
    [
        ({"strategy": "full", "align": "cache"}, "only a sampled strategy"),
        ({"strategy": "adaptive", "budget": 0.2, "align": "prefix"}, "sampling.align"),
    ],
)
def test_bad_align_exits_2_before_any_call(
    tmp_path: Path, sampling: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, None)
    cfg = yaml.safe_load(path.read_text())
    cfg["sampling"] = sampling
    path.write_text(yaml.safe_dump(cfg))
    code, _, err = _run(path)
    assert code == 2
    assert message in err and "t.yaml" in err
    assert not (tmp_path / "out" / "log").exists()
