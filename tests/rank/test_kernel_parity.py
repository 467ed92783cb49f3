"""The compiled Elo kernel against the NumPy lockstep and the plain reference.

Weighted Elo is the one pass of `arena.rank` with a compiled kernel
(`arena.rank._elo_kernel`): logs of `COMPILED_MIN_ROWS` rated reviews or more run
it, smaller ones advance the same orders in lockstep with NumPy. Every other
rank test runs on small logs; here the threshold is set to 0 so that the
kernel runs on them, and both must give what the plain reference loop of
`tests.rank.test_elo` gives over the documented orders, order for order.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.rank import RankOptions, elo_trajectory, encode_reviews, rank_reviews, weighted_elo
from arena.rank import _elo as elo_module
from tests.rank._frames import frame, random_reviews
from tests.rank.test_elo import _reference_elo


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Elo call in the test runs the compiled kernel."""
    monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 0)


@pytest.mark.parametrize(
    ("models", "judges", "questions", "orders", "seed"),
    [(4, 0, 5, 7, 0), (5, 2, 4, 9, 3), (3, 1, 30, 2, 11)],
)
def test_kernel_and_lockstep_match_the_reference(
    monkeypatch: pytest.MonkeyPatch,
    models: int,
    judges: int,
    questions: int,
    orders: int,
    seed: int,
) -> None:
    rs = encode_reviews(
        random_reviews(models=models, judges=judges, questions=questions, seed=seed)
    )
    reference = _reference_elo(rs, orders=orders, seed=seed)
    lockstep = weighted_elo(rs, orders=orders, seed=seed)
    monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 0)
    compiled = weighted_elo(rs, orders=orders, seed=seed)
    for ours in (lockstep, compiled):
        np.testing.assert_allclose(ours.rating, reference.rating, rtol=0, atol=1e-9)
        np.testing.assert_allclose(ours.weights, reference.weights, rtol=0, atol=1e-12)
        assert (ours.passes, ours.converged) == (reference.passes, reference.converged)
    assert compiled.passes > 1  # the reviewer weights really were re-derived
    assert compiled.order_error is not None and lockstep.order_error is not None
    np.testing.assert_allclose(compiled.order_error, lockstep.order_error, rtol=1e-9)


@pytest.mark.parametrize(
    ("models", "judges", "width"),
    [(12, 20, np.uint16), (100, 400, np.int32), (1100, 1400, np.int64)],
)
@pytest.mark.usefixtures("kernel")
def test_kernel_reads_codes_of_every_width(models: int, judges: int, width: type) -> None:
    rows = [
        (f"q{k}", f"M{k % models}", f"M{(k + 1) % models}", f"J{k % judges}", "AB"[k % 3 == 0])
        for k in range(max(models, judges))
    ]
    rs = encode_reviews(frame(rows))
    replay = elo_module.EloOrders(rs, 2, 1)
    assert replay.packed is not None and replay.packed.dtype == width
    ours = weighted_elo(rs, orders=2, seed=1, max_passes=3)
    reference = _reference_elo(rs, orders=2, seed=1, max_passes=3)
    np.testing.assert_allclose(ours.rating, reference.rating, rtol=0, atol=1e-9)


@pytest.mark.parametrize("per_thread", [1, 3, 100])
@pytest.mark.usefixtures("kernel")
def test_threads_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch, per_thread: int) -> None:
    rs = encode_reviews(random_reviews(models=4, judges=1, questions=6, seed=4))
    monkeypatch.setattr(elo_module, "cores", lambda: 1)
    alone = weighted_elo(rs, orders=11, seed=2)
    monkeypatch.setattr(elo_module, "cores", lambda: 4)
    monkeypatch.setattr(elo_module, "_ORDERS_PER_THREAD", per_thread)
    shared = weighted_elo(rs, orders=11, seed=2)
    np.testing.assert_array_equal(shared.rating, alone.rating)
    np.testing.assert_array_equal(shared.weights, alone.weights)


@pytest.mark.usefixtures("kernel")
def test_kernel_rates_the_trusted_battles_as_a_copy_of_them() -> None:
    from arena.rank._reliability import trusted_reviews

    rs = encode_reviews(random_reviews(models=5, questions=6, judges=2, seed=8))
    trusted = trusted_reviews(rs)
    weights = np.linspace(1.0, 2.0, rs.n_reviewers)
    weights /= weights.sum()
    ours = elo_module.weighted_elo_prefetched(
        rs, None, orders=4, seed=2, weights=weights, trusted_only=True
    )
    copied = weighted_elo(trusted, orders=4, seed=2, weights=weights)
    np.testing.assert_array_equal(ours.rating, copied.rating)
    assert ours.passes == copied.passes


def test_prefetched_orders_are_the_ones_drawn_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = encode_reviews(random_reviews(models=4, questions=6, seed=5))
    monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 0)
    prepared = elo_module.prefetch_orders(rs, rs.n_battles, 6, 9)
    assert prepared is not None
    assert prepared.result().packed is not None
    ours = elo_module.weighted_elo_prefetched(rs, prepared, orders=6, seed=9)
    np.testing.assert_array_equal(ours.rating, weighted_elo(rs, orders=6, seed=9).rating)


@pytest.mark.usefixtures("kernel")
def test_kernel_walks_each_order_as_the_scheme_lays_it_out() -> None:
    """Checkpoints after every review: the kernel's ratings after step t of order k are
    those of the plain loop over the first t reviews of `order_permutations`' row k."""
    rs = encode_reviews(random_reviews(models=4, questions=3, judges=1, seed=7))
    weights = np.full(rs.n_reviewers, 1.0 / rs.n_reviewers)
    table = elo_module._step_table(rs.n_reviewers, weights)
    replay = elo_module.EloOrders(rs, 5, 3)
    steps = np.arange(rs.n_battles + 1, dtype=np.int64)
    ours = replay.ratings_at(table, steps)
    perms = elo_module.order_permutations(rs.n_battles, 5, 3)
    lockstep = elo_module._lockstep(
        rs.model_a,
        rs.model_b,
        rs.reviewer.astype(np.int64) * 3 + rs.score.astype(np.int64) + 1,
        perms,
        table,
        rs.n_models,
        steps,
    )
    np.testing.assert_allclose(ours, lockstep, rtol=0, atol=1e-12)


def test_trajectory_is_the_same_on_either_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = encode_reviews(random_reviews(models=4, questions=5, judges=1, seed=3))
    weights = np.linspace(1.0, 2.0, rs.n_reviewers)
    weights /= weights.sum()
    lockstep = elo_trajectory(rs, weights, orders=5, points=9)
    monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 0)
    compiled = elo_trajectory(rs, weights, orders=5, points=9)
    assert compiled.steps.tolist() == lockstep.steps.tolist()
    np.testing.assert_allclose(compiled.rating, lockstep.rating, rtol=0, atol=1e-9)
    point = weighted_elo(rs, orders=5, max_passes=1, weights=weights).rating
    np.testing.assert_allclose(compiled.rating[-1], point, rtol=0, atol=1e-9)


def test_a_ranking_gives_the_same_elo_on_either_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rs = encode_reviews(random_reviews(models=5, questions=8, judges=1, seed=6))
    for weights in ("peerrank", "reliability", "equal"):
        options = RankOptions(elo_orders=12, bootstrap=0, weights=weights)
        monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 10**18)
        lockstep = rank_reviews(rs, options)
        monkeypatch.setattr(elo_module, "COMPILED_MIN_ROWS", 0)
        compiled = rank_reviews(rs, options)
        assert lockstep.elo is not None and compiled.elo is not None
        np.testing.assert_allclose(compiled.elo.rating, lockstep.elo.rating, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(compiled.bt.rating, lockstep.bt.rating)


@pytest.mark.usefixtures("kernel")
def test_replayed_orders_are_drawn_once_and_read_after() -> None:
    """With `keep` (several passes), the first pass leaves each order's reviews in the
    store, and the next passes read them there: the same ratings either way."""
    rs = encode_reviews(random_reviews(models=4, questions=4, judges=1, seed=2))
    table = elo_module._step_table(rs.n_reviewers, np.full(rs.n_reviewers, 1.0 / rs.n_reviewers))
    steps = np.array([0, rs.n_battles // 2, rs.n_battles], dtype=np.int64)
    fresh = elo_module.EloOrders(rs, 6, 4).ratings_at(table, steps)
    replay = elo_module.EloOrders(rs, 6, 4)
    replay.keep = True
    first = replay.ratings_at(table, steps)
    assert replay.packed is not None and replay._store is not None
    perms = elo_module.order_permutations(rs.n_battles, 6, 4)
    np.testing.assert_array_equal(replay._store, replay.packed[perms])
    second = replay.ratings_at(table, steps)
    np.testing.assert_array_equal(first, fresh)
    np.testing.assert_array_equal(second, fresh)
