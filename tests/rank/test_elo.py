"""Weighted Elo (PRD Algorithm 1) by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from arena.rank import EloResult, ReviewSet, encode_reviews, weighted_elo
from arena.rank import _elo as elo_module
from arena.rank._peerrank import weights_from_scores
from tests.rank._frames import frame, random_reviews


def test_one_review_moves_both_by_k_over_two() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A")]))
    elo = weighted_elo(rs, orders=3)
    np.testing.assert_allclose(elo.rating, [1016.0, 984.0])
    assert elo.passes == 1 and elo.converged  # a lone judge: weights stay equal


def test_two_reviews_in_either_order() -> None:
    # X wins then Y wins (or the reverse): the second update uses
    # e = 1 / (1 + 10^(32/400)) for the model 32 points behind.
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A"), ("q2", "Y", "X", "J", "A")]))
    behind = 1 / (1 + 10 ** (32 / 400))
    second = 32 * (1 - behind)
    one_order = weighted_elo(rs, orders=1, seed=1).rating
    candidates = [
        [1016 - second, 984 + second],  # X won first
        [984 + second, 1016 - second],  # Y won first
    ]
    assert any(np.allclose(one_order, c) for c in candidates)
    many = weighted_elo(rs, orders=40, seed=0).rating
    assert many.sum() == pytest.approx(2000.0)  # every update is zero-sum


def test_tie_between_equals_changes_nothing() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "tie")]))
    np.testing.assert_allclose(weighted_elo(rs, orders=2).rating, [1000.0, 1000.0])


def test_seeded_and_weights_from_elo() -> None:
    rs = encode_reviews(random_reviews(models=4, questions=6, seed=2))
    first = weighted_elo(rs, orders=10, seed=5)
    again = weighted_elo(rs, orders=10, seed=5)
    np.testing.assert_array_equal(first.rating, again.rating)
    assert first.weights.sum() == pytest.approx(1.0)
    # Weights are min-max scaled Elo: the lowest-rated reviewer gets zero.
    assert first.weights[int(np.argmin(first.rating))] == pytest.approx(0.0)
    assert first.rating.mean() == pytest.approx(1000.0)
    # Stronger models (higher index in random_reviews) end higher.
    assert first.rating[-1] > first.rating[0]


def test_no_battles() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "invalid")]))
    elo = weighted_elo(rs, orders=5)
    np.testing.assert_allclose(elo.rating, [1000.0, 1000.0])
    assert elo.passes == 0


_MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """SplitMix64's finaliser on a Python integer."""
    z ^= z >> 30
    z = z * 0xBF58476D1CE4E5B9 & _MASK64
    z ^= z >> 27
    z = z * 0x94D049BB133111EB & _MASK64
    return z ^ (z >> 31)


def reference_orders(n: int, orders: int, seed: int) -> list[list[int]]:
    """Elo's orders as documented, one swap at a time in plain Python: order k's key is
    mix64(seed * 2**32 + k); step i swaps positions i and i + (h >> 32) * (n - i) >> 32,
    h = mix64(key + (i + 1) * 0x9E3779B97F4A7C15)."""
    out = []
    for k in range(orders):
        key = _mix64(((seed << 32) + k) & _MASK64)
        order = list(range(n))
        for i in range(n):
            h = _mix64((key + (i + 1) * 0x9E3779B97F4A7C15) & _MASK64)
            j = i + (((h >> 32) * (n - i)) >> 32)
            order[i], order[j] = order[j], order[i]
        out.append(order)
    return out


def _reference_elo(
    rs: ReviewSet, *, orders: int, seed: int, tol: float = 1e-6, max_passes: int = 10
) -> EloResult:
    """Weighted Elo the plain way: every order built by hand, one review at a time."""
    perms = reference_orders(rs.n_battles, orders, seed)
    target = (1.0 - rs.score.astype(np.float64)) / 2.0
    battled = np.bincount(rs.model_a, minlength=rs.n_models) + np.bincount(
        rs.model_b, minlength=rs.n_models
    )

    def mean_rating(weights: np.ndarray) -> np.ndarray:
        gain = 32.0 * (weights * rs.n_reviewers)[rs.reviewer]
        total = np.zeros(rs.n_models)
        for perm in perms:
            rating = np.full(rs.n_models, 1000.0)
            for k in perm:
                a, b = rs.model_a[k], rs.model_b[k]
                expected = 1.0 / (1.0 + 10.0 ** ((rating[b] - rating[a]) / 400.0))
                delta = gain[k] * (target[k] - expected)
                rating[a] += delta
                rating[b] -= delta
            total += rating
        return total / orders

    weights = np.full(rs.n_reviewers, 1.0 / rs.n_reviewers)
    rating = mean_rating(weights)
    passes, converged = 1, False
    while passes < max_passes:
        scores = np.where(battled > 0, rating, np.nan)[None]
        new = weights_from_scores(scores, rs.reviewer_as_contestant)[0]
        if float(np.abs(new - weights).max()) < tol:
            converged = True
            break
        weights = new
        rating = mean_rating(weights)
        passes += 1
    return EloResult(rating, weights, passes, converged, orders)


@pytest.mark.parametrize(
    ("models", "judges", "questions", "orders", "seed"),
    [(4, 0, 5, 7, 0), (5, 2, 4, 9, 3), (3, 1, 30, 2, 11)],
)
def test_elo_matches_the_reference_one_review_at_a_time(
    models: int, judges: int, questions: int, orders: int, seed: int
) -> None:
    # The documented orders, every order updated one review at a time in plain Python.
    rs = encode_reviews(
        random_reviews(models=models, judges=judges, questions=questions, seed=seed)
    )
    ours = weighted_elo(rs, orders=orders, seed=seed)
    plain = _reference_elo(rs, orders=orders, seed=seed)
    np.testing.assert_allclose(ours.rating, plain.rating, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.weights, plain.weights, rtol=0, atol=1e-12)
    assert (ours.passes, ours.converged) == (plain.passes, plain.converged)
    assert ours.passes > 1  # the reviewer weights really were re-derived


@pytest.mark.parametrize(
    ("n", "orders", "seed"), [(1, 1, 0), (7, 3, 5), (3000, 4, 0), (500, 2, -3)]
)
def test_orders_follow_the_documented_scheme(n: int, orders: int, seed: int) -> None:
    ours = elo_module.order_permutations(n, orders, seed)
    assert ours.shape == (orders, n)
    np.testing.assert_array_equal(ours, reference_orders(n, orders, seed))
    assert all(sorted(row) == list(range(n)) for row in ours.tolist())


@pytest.mark.parametrize(
    ("models", "judges", "width"),
    [(12, 20, np.uint16), (100, 400, np.int32), (1100, 1400, np.int64)],
)
def test_codes_of_every_width(models: int, judges: int, width: type) -> None:
    # Reviews are packed in the narrowest integer holding both model codes and the
    # reviewer-and-score kind: 16 bits for small tournaments, 64 for very large ones.
    rows = [
        (f"q{k}", f"M{k % models}", f"M{(k + 1) % models}", f"J{k % judges}", "AB"[k % 3 == 0])
        for k in range(max(models, judges))
    ]
    rs = encode_reviews(frame(rows))
    assert elo_module.EloOrders(rs, 1, 0)._pack().dtype == width
    ours = weighted_elo(rs, orders=2, seed=1, max_passes=3)
    plain = _reference_elo(rs, orders=2, seed=1, max_passes=3)
    np.testing.assert_allclose(ours.rating, plain.rating, rtol=0, atol=1e-9)


def test_elo_point_does_not_depend_on_the_bootstrap_seed() -> None:
    from arena.rank import ELO_ORDER_SEED, RankOptions, rank_reviews

    rs = encode_reviews(random_reviews(models=4, questions=6, seed=3))
    options = RankOptions(elo_orders=6, bootstrap=10, weights="peerrank")
    first = rank_reviews(rs, options)
    other = rank_reviews(rs, dataclasses.replace(options, seed=5))
    assert first.elo is not None and other.elo is not None
    np.testing.assert_array_equal(first.elo.rating, other.elo.rating)
    fixed = weighted_elo(rs, orders=6, seed=ELO_ORDER_SEED)
    np.testing.assert_allclose(first.elo.rating, fixed.rating)


def test_order_error_is_the_standard_error_over_orders() -> None:
    rs = encode_reviews(random_reviews(models=3, questions=4, seed=1))
    n = 5
    # The first k orders of a run are the first k of any longer run: recover each order's Elo.
    means = [weighted_elo(rs, orders=k, seed=2, max_passes=1).rating for k in range(1, n + 1)]
    per_order = [means[0]] + [(k + 1) * means[k] - k * means[k - 1] for k in range(1, n)]
    expected = np.std(per_order, axis=0, ddof=1) / np.sqrt(n)
    result = weighted_elo(rs, orders=n, seed=2, max_passes=1)
    assert result.order_error is not None
    np.testing.assert_allclose(result.order_error, expected, rtol=1e-6)
    assert np.isnan(weighted_elo(rs, orders=1, max_passes=1).order_error).all()


def test_elo_with_given_weights_uses_them() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A"), ("q1", "X", "Y", "K", "B")]))
    # J counts twice K's weight (mean-normalised: 4/3 and 2/3).
    result = weighted_elo(rs, orders=1, max_passes=1, weights=np.array([2 / 3, 1 / 3]))
    np.testing.assert_allclose(result.weights, [2 / 3, 1 / 3])
    assert result.rating[0] > 1000.0


def test_elo_orders_are_capped_by_their_work_on_big_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Orders x reviews stays within ELO_ORDER_STEPS (at least MIN_ELO_ORDERS orders): the
    point is then the mean of the first orders of the same fixed stream, and stays
    within its (larger, reported) order error of the full count's."""
    from arena.rank import (
        ELO_ORDER_SEED,
        ELO_ORDER_STEPS,
        MIN_ELO_ORDERS,
        RankOptions,
        elo_order_count,
        rank_reviews,
    )
    from arena.rank import _ranking as ranking_module

    assert elo_order_count(100, 5_400) == 100  # the demo's log keeps every order
    assert elo_order_count(100, ELO_ORDER_STEPS // 100) == 100
    assert elo_order_count(100, 1_000_000) == max(MIN_ELO_ORDERS, ELO_ORDER_STEPS // 1_000_000)
    assert elo_order_count(100, 10**9) == MIN_ELO_ORDERS
    assert elo_order_count(7, 10**9) == 7  # never more than asked
    rs = encode_reviews(random_reviews(models=5, questions=8, seed=6))
    options = RankOptions(elo_orders=60, bootstrap=0, weights="equal")
    full = rank_reviews(rs, options)
    n = rs.n_battles
    monkeypatch.setattr(ranking_module, "ELO_ORDER_STEPS", 25 * n)
    monkeypatch.setattr(ranking_module, "MIN_ELO_ORDERS", 5)
    capped = rank_reviews(rs, options)
    assert full.elo is not None and capped.elo is not None
    assert full.elo.orders == 60 and capped.elo.orders == 25
    first = weighted_elo(rs, orders=25, seed=ELO_ORDER_SEED, max_passes=1)
    np.testing.assert_allclose(capped.elo.rating, first.rating)
    assert capped.elo.order_error is not None and full.elo.order_error is not None
    assert np.all(capped.elo.order_error > full.elo.order_error)
    assert np.all(np.abs(capped.elo.rating - full.elo.rating) <= 4 * capped.elo.order_error)
    monkeypatch.setattr(ranking_module, "ELO_ORDER_STEPS", 1)
    floor = rank_reviews(rs, options)
    assert floor.elo is not None and floor.elo.orders == 5


def test_elo_of_the_trusted_battles_keeps_no_copy_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """`trusted_only` rates the battles whose reviewer does not compete in them as a copy
    holding only those would be rated (packed a slice at a time, no copy of `rs`)."""
    from arena.rank import _reliability as reliability_module
    from arena.rank._reliability import trusted_count, trusted_reviews

    rs = encode_reviews(random_reviews(models=5, questions=6, judges=2, seed=8))
    trusted = trusted_reviews(rs)
    assert 0 < trusted_count(rs) == trusted.n_battles < rs.n_battles
    monkeypatch.setattr(reliability_module, "_MASK_SLICE", 64)  # several slices to walk
    replay = elo_module.EloOrders(rs, 3, 5, trusted_only=True)
    assert replay.n == trusted.n_battles
    np.testing.assert_array_equal(replay._pack(), elo_module.EloOrders(trusted, 3, 5)._pack())
    weights = np.linspace(1.0, 2.0, rs.n_reviewers)
    weights /= weights.sum()
    ours = elo_module.weighted_elo_prefetched(
        rs, None, orders=4, seed=2, weights=weights, trusted_only=True
    )
    copied = weighted_elo(trusted, orders=4, seed=2, weights=weights)
    np.testing.assert_array_equal(ours.rating, copied.rating)
    np.testing.assert_array_equal(ours.weights, copied.weights)
    assert ours.passes == copied.passes
