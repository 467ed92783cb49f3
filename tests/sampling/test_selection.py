"""The sampling rule on crafted inputs: allocation, balance, where adaptive rounds go."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.sampling import (
    DesignFit,
    Grid,
    allocate,
    balanced_units,
    choose_round,
    fit_design,
    reviewer_shares,
    select_round,
    target_scores,
)
from arena.sampling._adaptive import UNIFORM_SHARE


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
    # Pair (0, 1) is a coin flip, (0, 2) and (1, 2) are settled: model 2 is far below.
    p = np.array([[0.5, 0.5, 1.0], [0.5, 0.5, 1.0], [0.0, 0.0, 0.5]])
    fit = DesignFit(
        rating=np.array([1000.0, 1000.0, 600.0]),
        low=np.array([950.0, 950.0, 550.0]),
        high=np.array([1050.0, 1050.0, 650.0]),
        p_above=p,
        weights=np.full(3, 1 / 3),
        battles=np.zeros(3, dtype=np.int64),
    )
    seed = balanced_units(grid, 30, np.random.default_rng(0))
    selected = np.zeros(grid.size, dtype=np.bool_)
    selected[seed] = True
    units = choose_round(grid, selected, fit, 60, np.random.default_rng(1))
    assert units.size == 60 and not selected[units].any()
    q, pair, r = grid.split(units)
    counts = np.bincount(pair, minlength=3)  # pairs are (0,1), (0,2), (1,2)
    # The balanced half reaches every pair; the targeted half goes to the coin flip.
    assert counts.min() >= 10
    assert counts[0] >= 35
    # Inside the pair: every question before any question a third time.
    both = np.concatenate([seed, units])
    qb, pb, rb = grid.split(both)
    per_q = np.bincount(qb[pb == 0], minlength=20)
    assert per_q.max() - per_q.min() <= 1
    # Reviewers stay mixed (equal reliability): even shares, within one.
    per_r = np.bincount(rb[pb == 0], minlength=3)
    assert per_r.max() - per_r.min() <= 1


def test_target_scores_spread_over_close_models_and_skip_settled_far_pairs() -> None:
    grid = Grid(n_questions=30, n_contestants=4, n_reviewers=4)
    have = np.full(grid.n_pairs, 20, dtype=np.int64)

    def fit_of(rating: np.ndarray) -> DesignFit:
        above = (rating[:, None] > rating[None, :]).astype(float)
        close = np.abs(rating[:, None] - rating[None, :]) < 50
        above = np.where(close, 0.5, above)
        return DesignFit(
            rating=rating,
            low=rating - 30,
            high=rating + 30,
            p_above=above,
            weights=np.full(4, 0.25),
            battles=np.zeros(4, dtype=np.int64),
        )

    # Four close models: every pair informs every rating, so all pairs score alike.
    close = target_scores(grid, fit_of(np.array([1010.0, 1000.0, 995.0, 990.0])), have)
    assert close.min() > 0.5 * close.max()
    # Two tiers far apart: the pairs inside a tier score far above the pairs across.
    tiers = target_scores(grid, fit_of(np.array([1400.0, 1390.0, 610.0, 600.0])), have)
    inside = tiers[[0, 5]]  # pairs (0,1) and (2,3)
    across = tiers[[1, 2, 3, 4]]
    assert inside.min() > 20 * across.max()
    # A pair judged more often than another, all else equal, scores lower.
    more = have.copy()
    more[0] = 80
    assert (
        target_scores(grid, fit_of(np.array([1400.0, 1390.0, 610.0, 600.0])), more)[0] < inside[0]
    )


def _sim_reviews(grid: Grid, units: np.ndarray, noise: np.ndarray, seed: int = 0) -> pl.DataFrame:
    """Both reviews of each unit: answer quality 0.4 * (C - i) + N(0, 1) per question,
    each reviewer seeing it with its own noise."""
    rng = np.random.default_rng([seed, 7])
    c = grid.n_contestants
    quality = 0.4 * (c - np.arange(c))[None, :] + rng.standard_normal((grid.n_questions, c))
    q, p, r = grid.split(units)
    i, j = grid.pair_members()
    a, b = i[p], j[p]
    rows = []
    for qq, aa, bb, rr in zip(q.tolist(), a.tolist(), b.tolist(), r.tolist(), strict=True):
        for x, y in ((aa, bb), (bb, aa)):
            seen = quality[qq, x] - quality[qq, y] + noise[rr] * rng.standard_normal()
            rows.append((f"q{qq}", f"m{x}", f"m{y}", f"m{rr}", "A" if seen > 0 else "B"))
    return _reviews(rows)


def _run_design(
    grid: Grid, budget: int, noise: np.ndarray, seed: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """Every round of an adaptive design of `budget` units, as a run makes them."""
    names = [f"m{k}" for k in range(grid.n_contestants)]
    selected = np.zeros(grid.size, dtype=np.bool_)
    rounds: list[np.ndarray] = []
    seed_units = int(0.3 * budget)
    per_round = -(-(budget - seed_units) // 4)
    for k in range(20):
        chosen = np.flatnonzero(selected)
        frame = _sim_reviews(grid, chosen, noise) if chosen.size else _reviews([])
        choice = select_round(
            grid,
            selected,
            frame,
            names,
            names,
            left=budget - int(selected.sum()),
            seed_units=seed_units,
            round_units=per_round,
            adaptive=True,
            rng=np.random.default_rng([seed, k]),
            fit_seed=seed * 1000 + k,
        )
        if choice.units.size == 0:
            break
        assert not selected[choice.units].any()  # never a unit twice
        selected[choice.units] = True
        rounds.append(choice.units)
    return rounds, selected


def test_select_round_spends_the_budget_keeps_coverage_and_is_deterministic() -> None:
    grid = Grid(n_questions=12, n_contestants=5, n_reviewers=5)  # 10 pairs, 600 units
    noise = np.array([0.3, 0.5, 0.4, 5.0, 0.6])
    rounds, selected = _run_design(grid, 150, noise, seed=3)
    assert int(selected.sum()) == 150  # the budget, exactly
    assert len(rounds) == 5  # the seed round and four adaptive rounds
    # Coverage never stalls: after every round, the least judged pair has at least
    # what a uniform design of the balanced shares alone would give it.
    so_far = np.zeros(grid.size, dtype=np.bool_)
    balanced = 0
    for k, units in enumerate(rounds):
        so_far[units] = True
        balanced += units.size if k == 0 else round(UNIFORM_SHARE * units.size)
        _, p, _ = grid.split(np.flatnonzero(so_far))
        assert np.bincount(p, minlength=grid.n_pairs).min() >= balanced // grid.n_pairs - 1
    q, p, _ = grid.split(np.flatnonzero(selected))
    cover = np.zeros((grid.n_pairs, grid.n_questions), dtype=int)
    np.add.at(cover, (p, q), 1)
    # Inside each pair, questions are judged evenly (least covered first).
    assert (cover.max(axis=1) - cover.min(axis=1) <= 1).all()
    # The same seed gives the same design; another seed another one.
    again, _ = _run_design(grid, 150, noise, seed=3)
    assert all((x == y).all() for x, y in zip(rounds, again, strict=True))
    other, _ = _run_design(grid, 150, noise, seed=4)
    assert any(x.size != y.size or (x != y).any() for x, y in zip(rounds, other, strict=False))


def test_select_round_when_the_budget_is_spent_or_the_design_uniform() -> None:
    grid = Grid(n_questions=6, n_contestants=4, n_reviewers=4)
    names = [f"m{k}" for k in range(4)]
    selected = np.zeros(grid.size, dtype=np.bool_)
    done = select_round(
        grid,
        selected,
        _reviews([]),
        names,
        names,
        left=0,
        seed_units=10,
        round_units=5,
        adaptive=True,
        rng=np.random.default_rng(0),
        fit_seed=0,
    )
    assert done.units.size == 0
    first = select_round(
        grid,
        selected,
        _reviews([]),
        names,
        names,
        left=40,
        seed_units=24,
        round_units=5,
        adaptive=False,
        rng=np.random.default_rng(0),
        fit_seed=0,
    )
    assert first.units.size == 24 and first.fit is None
    _, p, _ = grid.split(first.units)
    assert set(np.bincount(p, minlength=6).tolist()) == {4}


def test_reliability_finds_the_random_judge_and_shares_follow_it() -> None:
    grid = Grid(n_questions=20, n_contestants=5, n_reviewers=5)
    noise = np.array([0.3, 0.3, 8.0, 0.3, 0.3])  # m2 judges at random
    units = balanced_units(grid, 400, np.random.default_rng(0))
    names = [f"m{k}" for k in range(5)]
    fit = fit_design(_sim_reviews(grid, units, noise), names, names, seed=1)
    assert fit.reliability is not None
    assert fit.reliability[2] < 0.4 * np.delete(fit.reliability, 2).min()
    shares = reviewer_shares(grid, fit)
    assert np.allclose(shares.sum(axis=1), 1.0)
    # Pair (m0, m1): its own models keep their full-design share, 1/5 each;
    # the random judge gets far less than the reliable ones.
    assert shares[0, 0] == pytest.approx(0.2) and shares[0, 1] == pytest.approx(0.2)
    assert shares[0, 2] < 0.5 * shares[0, 3]
    # Pair (m2, m3) (index 7): the random judge is one of its models, so it keeps 1/5.
    assert shares[7, 2] == pytest.approx(0.2)


def _reviews(rows: list[tuple[str, str, str, str, str]]) -> pl.DataFrame:
    columns = ("question_id", "model_a", "model_b", "reviewer", "verdict")
    if not rows:
        return pl.DataFrame(schema={k: pl.String for k in columns})
    return pl.DataFrame(dict(zip(columns, zip(*rows, strict=True), strict=True)))


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


def test_per_dollar_shares_favour_cheap_reviewers_and_keep_own_shares() -> None:
    grid = Grid(n_questions=20, n_contestants=5, n_reviewers=5)
    units = balanced_units(grid, 400, np.random.default_rng(0))
    names = [f"m{k}" for k in range(5)]
    fit = fit_design(_sim_reviews(grid, units, np.full(5, 0.3)), names, names, seed=1)
    cost = np.array([1.0, 1.0, 1.0, 10.0, 0.0])  # m3 costs ten times more; m4 is free
    by_reliability = reviewer_shares(grid, fit)
    per_dollar = reviewer_shares(grid, fit, cost)
    assert np.allclose(per_dollar.sum(axis=1), 1.0)
    # Pair (m0, m1): its own models keep 1/5 each; m3 gets a small part of the rest.
    assert per_dollar[0, 0] == pytest.approx(0.2) and per_dollar[0, 1] == pytest.approx(0.2)
    assert per_dollar[0, 3] < 0.25 * by_reliability[0, 3]
    # The free reviewer counts as COST_FLOOR of the mean cost: much, not everything.
    assert per_dollar[0, 4] > per_dollar[0, 2] and per_dollar[0, 4] < 0.6
    # No cost known (all zero): the reliability shares.
    assert np.allclose(reviewer_shares(grid, fit, np.zeros(5)), by_reliability)


def test_balanced_units_follow_given_shares() -> None:
    grid = Grid(n_questions=30, n_contestants=4, n_reviewers=4)
    shares = np.tile(np.array([0.55, 0.25, 0.15, 0.05]), (grid.n_pairs, 1))
    units = balanced_units(grid, 6 * 40, np.random.default_rng(3), shares=shares)
    _, p, r = grid.split(units)
    assert set(np.bincount(p, minlength=grid.n_pairs).tolist()) == {40}
    per_reviewer = np.bincount(r, minlength=4) / units.size
    assert np.allclose(per_reviewer, [0.55, 0.25, 0.15, 0.05], atol=0.02)
    # Without shares, reviewers take even turns.
    even = balanced_units(grid, 6 * 40, np.random.default_rng(3))
    assert set(np.bincount(grid.split(even)[2], minlength=4).tolist()) == {60}
