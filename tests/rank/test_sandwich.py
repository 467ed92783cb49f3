"""Cluster-robust sandwich intervals for Bradley-Terry, checked against statsmodels."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.rank import ELO_PER_NAT, RankOptions, encode_reviews, rank_reviews
from tests.rank._frames import random_reviews


def _binary_reviews(seed: int, questions: int = 40) -> pl.DataFrame:
    """One judge, no ties, a question effect shared by the question's verdicts."""
    rng = np.random.default_rng(seed)
    skill = {"m0": 0.0, "m1": 0.4, "m2": -0.3, "m3": 0.9}
    rows: dict[str, list[str]] = {
        k: [] for k in ("question_id", "model_a", "model_b", "reviewer", "verdict")
    }
    for q in range(questions):
        quality = {m: s + rng.normal(0, 0.6) for m, s in skill.items()}
        for a in skill:
            for b in skill:
                if a != b and rng.random() < 0.8:
                    p = 1 / (1 + np.exp(-(quality[a] - quality[b])))
                    verdict = "A" if rng.random() < p else "B"
                    for key, value in zip(rows, (f"q{q}", a, b, "J", verdict), strict=True):
                        rows[key].append(value)
    return pl.DataFrame(rows)


def test_sandwich_matches_statsmodels_cluster_robust_glm() -> None:
    sm = pytest.importorskip("statsmodels.api")
    reviews = _binary_reviews(1)
    rs = encode_reviews(reviews)
    ranking = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights="equal", anchor="m0"))
    assert ranking.intervals == "sandwich" and ranking.bt_covariance is not None
    # The same model as a logistic GLM: one column per model but the anchor.
    names = list(rs.contestants)
    others = [n for n in names if n != "m0"]
    x = np.zeros((reviews.height, len(others)))
    for row, (a, b) in enumerate(zip(reviews["model_a"], reviews["model_b"], strict=True)):
        if a != "m0":
            x[row, others.index(a)] += 1.0
        if b != "m0":
            x[row, others.index(b)] -= 1.0
    y = (reviews["verdict"] == "A").to_numpy().astype(float)
    groups = reviews["question_id"].str.slice(1).cast(pl.Int64).to_numpy()
    fit = sm.GLM(y, x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    q = rs.n_questions
    expected = np.asarray(fit.cov_params()) * q / (q - 1) * ELO_PER_NAT**2
    index = [names.index(n) for n in others]
    np.testing.assert_allclose(
        ranking.bt_covariance[np.ix_(index, index)], expected, rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        ranking.bt.rating[index] - 1000.0, np.asarray(fit.params) * ELO_PER_NAT, atol=1e-5
    )
    anchor = names.index("m0")
    assert ranking.bt.ci_low[anchor] == ranking.bt.ci_high[anchor] == 1000.0


def test_sandwich_does_not_move_with_the_seed_and_agrees_with_the_bootstrap() -> None:
    rs = encode_reviews(random_reviews(models=5, questions=30, seed=4))
    first = rank_reviews(rs, RankOptions(elo=False, bootstrap=50, seed=0))
    second = rank_reviews(rs, RankOptions(elo=False, bootstrap=50, seed=9))
    np.testing.assert_array_equal(first.bt.ci_low, second.bt.ci_low)
    np.testing.assert_array_equal(first.bt.ci_high, second.bt.ci_high)
    shares = [n.share for n in first.ranks.neighbours]
    assert shares == [n.share for n in second.ranks.neighbours]
    boot = rank_reviews(rs, RankOptions(elo=False, bootstrap=400, seed=1, intervals="bootstrap"))
    assert boot.intervals == "bootstrap" and boot.bt_covariance is None
    width = first.bt.ci_high - first.bt.ci_low
    boot_width = boot.bt.ci_high - boot.bt.ci_low
    # The bootstrap also refits the weights; the widths still agree closely.
    np.testing.assert_allclose(width, boot_width, rtol=0.3)


def test_neighbour_share_is_the_normal_probability_of_the_order() -> None:
    from scipy.stats import norm

    rs = encode_reviews(random_reviews(models=4, questions=25, seed=2))
    ranking = rank_reviews(rs, RankOptions(elo=False, bootstrap=0))
    cov = ranking.bt_covariance
    assert cov is not None
    for n in ranking.ranks.neighbours:
        gap = ranking.bt.rating[n.upper] - ranking.bt.rating[n.lower]
        sd = np.sqrt(cov[n.upper, n.upper] + cov[n.lower, n.lower] - 2 * cov[n.upper, n.lower])
        assert n.share == pytest.approx(float(norm.cdf(gap / sd)))
