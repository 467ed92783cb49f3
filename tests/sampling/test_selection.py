"""The sampling rule on crafted inputs: allocation, balance, where adaptive rounds go."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.sampling import DesignFit, Grid, allocate, balanced_units, choose_round, fit_design


def test_allocate_is_proportional_within_capacity_and_deterministic() -> None:
    score = np.array([0.5, 0.25, 0.25, 0.0])
    cap = np.array([100, 100, 3, 100])
    out = allocate(score, cap, 40)
    assert out.sum() == 40
    assert out[2] == 3  # full: its share goes to the others in proportion
    assert out[0] == pytest.approx(2 * out[1], abs=1)
    assert out[3] == 0
    assert (allocate(score, cap, 40) == out).all()
    # More than there is room for: everything available, nothing more.
    assert (allocate(score, cap, 10_000) == cap).all()


def test_balanced_units_spread_over_pairs_reviewers_and_questions() -> None:
    grid = Grid(n_questions=10, n_contestants=4, n_reviewers=3)  # 6 pairs, 180 units
    units = balanced_units(grid, 60, np.random.default_rng(1))
    assert units.size == 60 and np.unique(units).size == 60
    q, p, r = grid.split(units)
    assert set(np.bincount(p, minlength=6).tolist()) == {10}
    per_pair_reviewer = np.zeros((6, 3), dtype=int)
    np.add.at(per_pair_reviewer, (p, r), 1)
    assert per_pair_reviewer.max() - per_pair_reviewer.min() <= 1
    per_pair_question = np.zeros((6, 10), dtype=int)
    np.add.at(per_pair_question, (p, q), 1)
    assert (per_pair_question == 1).all()  # 10 units per pair: every question once
    # Adding to a design keeps out what is there and keeps the balance.
    mask = np.zeros(grid.size, dtype=np.bool_)
    mask[units] = True
    more = balanced_units(grid, 60, np.random.default_rng(2), mask)
    assert not mask[more].any()
    q2, p2, _ = grid.split(np.concatenate([units, more]))
    per_pair_question = np.zeros((6, 10), dtype=int)
    np.add.at(per_pair_question, (p2, q2), 1)
    assert per_pair_question.min() >= 1 and per_pair_question.max() <= 3
    assert (per_pair_question.sum(axis=1) == 20).all()


def _fit(p_above: np.ndarray, weights: np.ndarray) -> DesignFit:
    c = p_above.shape[0]
    rating = 1000.0 - 10.0 * np.arange(c)
    return DesignFit(
        rating=rating,
        low=rating - 5,
        high=rating + 5,
        p_above=p_above,
        weights=weights,
        battles=np.zeros(c, dtype=np.int64),
    )


def test_adaptive_round_goes_to_the_uncertain_pair() -> None:
    grid = Grid(n_questions=20, n_contestants=3, n_reviewers=3)
    # Pair (0, 1) is a coin flip, (0, 2) and (1, 2) are settled.
    p = np.array([[0.5, 0.5, 1.0], [0.5, 0.5, 1.0], [0.0, 0.0, 0.5]])
    weights = np.array([0.5, 0.5, 0.0])
    selected = np.zeros(grid.size, dtype=np.bool_)
    units = choose_round(grid, selected, _fit(p, weights), 30, np.random.default_rng(0))
    q, pair, r = grid.split(units)
    counts = np.bincount(pair, minlength=3)
    assert counts[0] >= 28  # pairs are (0,1), (0,2), (1,2)
    # Inside the pair: 20 questions first, each once, before any question twice.
    first = np.bincount(q[pair == 0], minlength=20)
    assert first.min() >= 1
    # Reviewers stay mixed: no reviewer takes more than its even share plus one.
    per_r = np.bincount(r[pair == 0], minlength=3)
    assert per_r.max() - per_r.min() <= 1


def _reviews(rows: list[tuple[str, str, str, str, str]]) -> pl.DataFrame:
    q, a, b, r, v = zip(*rows, strict=True)
    return pl.DataFrame({"question_id": q, "model_a": a, "model_b": b, "reviewer": r, "verdict": v})


def test_fit_design_sweep_is_finite_and_certain_and_full_pairs_are_settled() -> None:
    names = ["x", "y", "z"]
    rows = []
    for k in range(12):
        for rev in names:
            rows += [(f"q{k}", "x", "y", rev, "A"), (f"q{k}", "y", "x", rev, "B")]
            rows += [(f"q{k}", "y", "z", rev, "A"), (f"q{k}", "z", "y", rev, "B")]
            v = "A" if k % 2 else "B"
            rows += [(f"q{k}", "x", "z", rev, v), (f"q{k}", "z", "x", rev, v)]
    fit = fit_design(_reviews(rows), names, names, seed=3)
    assert np.isfinite(fit.rating).all()
    assert fit.p_above[0, 1] > 0.99 and fit.p_above[1, 2] > 0.99
    assert fit.order() == [0, 1, 2]
    assert fit.weights.sum() == pytest.approx(1.0)
    # Measured against a full design of exactly these units (12 questions x 3
    # reviewers per pair): nothing is left to draw, so the order is settled.
    full = fit_design(_reviews(rows), names, names, seed=3, full_units_per_pair=36)
    assert full.p_above[0, 1] == 1.0 and full.p_above[1, 2] == 1.0
    # Against a much larger full design, the same pair stays less settled.
    bigger = fit_design(_reviews(rows[:18]), names, names, seed=3, full_units_per_pair=3600)
    assert bigger.p_above[0, 2] < 1.0


def test_neighbours_report_separation() -> None:
    p = np.array([[0.5, 1.0, 1.0], [0.0, 0.5, 0.6], [0.0, 0.4, 0.5]])
    fit = DesignFit(
        rating=np.array([1100.0, 1000.0, 990.0]),
        low=np.array([1080.0, 980.0, 970.0]),
        high=np.array([1120.0, 1020.0, 1010.0]),
        p_above=p,
        weights=np.full(3, 1 / 3),
        battles=np.zeros(3, dtype=np.int64),
    )
    assert fit.neighbours() == [(0, 1, 1.0, True), (1, 2, 0.6, False)]
    assert not fit.all_separated()
