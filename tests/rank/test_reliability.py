"""Reliability weights: recovery of known judges, self-reviews left out, the public function."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from arena.rank import (
    RankOptions,
    encode_reviews,
    fit_reliability,
    fit_reliability_batch,
    rank_correlation,
    rank_reviews,
    reliability_weights,
    tally_reviews,
    trusted_reviews,
    trusted_tensor,
)
from arena.rank._aggregate import bootstrap_counts
from arena.rank._reliability import reliability_features, resample_reliability

SKILL = {"m0": 1.2, "m1": 0.6, "m2": 0.0, "m3": -0.6, "m4": -1.2}
# reviewer -> (discrimination, position bias, self-preference), in log-odds.
JUDGES = {
    "m0": (0.2, 0.0, 0.0),  # the best contestant is nearly a coin
    "m1": (0.5, 0.0, 3.0),  # strongly self-preferring
    "m2": (1.5, 1.0, 0.0),  # sharp but biased towards the first answer
    "m3": (2.0, 0.0, 0.0),
    "m4": (1.0, -0.5, 0.0),
}


def _logistic_reviews(seed: int = 0, questions: int = 60, tie_share: float = 0.1) -> pl.DataFrame:
    """Verdicts drawn from the reliability model itself, every ordered pair, every reviewer."""
    rng = np.random.default_rng(seed)
    names = list(SKILL)
    rows: dict[str, list[str]] = {k: [] for k in ("question_id", "model_a", "model_b")}
    rows |= {"reviewer": [], "verdict": []}
    for q in range(questions):
        for a in names:
            for b in names:
                if a == b:
                    continue
                for r, (disc, bias, own) in JUDGES.items():
                    eta = disc * (SKILL[a] - SKILL[b]) + bias + own * ((r == a) - (r == b))
                    u = rng.random()
                    p = 1.0 / (1.0 + np.exp(-eta))
                    verdict = "tie" if u < tie_share else "A" if rng.random() < p else "B"
                    for key, value in zip(rows, (f"q{q}", a, b, r, verdict), strict=True):
                        rows[key].append(value)
    return pl.DataFrame(rows)


def test_fit_recovers_known_judges() -> None:
    rs = encode_reviews(_logistic_reviews())
    fit = fit_reliability(rs)
    assert fit.converged
    true = np.array([JUDGES[r][0] for r in rs.reviewers])
    # The scale is shared with the strengths: compare discrimination up to one factor.
    scale = float((fit.discrimination * true).sum() / (true * true).sum())
    np.testing.assert_allclose(fit.discrimination, scale * true, atol=0.15)
    assert rank_correlation(fit.weights, true).spearman == pytest.approx(1.0)
    by_name = dict(zip(rs.reviewers, range(len(rs.reviewers)), strict=True))
    assert fit.position_bias[by_name["m2"]] > 0.6
    assert fit.self_preference[by_name["m1"]] > 1.5
    assert abs(fit.self_preference[by_name["m3"]]) < 0.6
    skills = np.array([SKILL[m] for m in rs.contestants])
    assert rank_correlation(fit.strength, skills).kendall_tau == pytest.approx(1.0)
    # Weights are proportional to the discrimination and sum to 1.
    np.testing.assert_allclose(fit.weights, fit.discrimination / fit.discrimination.sum())
    # Accuracy: share of trusted verdicts naming the stronger model, best for the sharpest.
    assert rs.reviewers[int(np.argmax(fit.accuracy))] == "m3"
    assert rs.reviewers[int(np.argmin(fit.accuracy))] == "m0"
    assert fit.accuracy.max() < 1.0 and fit.accuracy.min() > 0.4


def test_adversarial_judge_gets_no_weight() -> None:
    reviews = _logistic_reviews(questions=30)
    flipped = reviews.filter(pl.col("reviewer") == "m3").with_columns(
        reviewer=pl.lit("liar"), verdict=pl.col("verdict").replace({"A": "B", "B": "A"})
    )
    rs = encode_reviews(pl.concat([reviews, flipped]))
    fit = fit_reliability(rs)
    liar = rs.reviewers.index("liar")
    assert fit.discrimination[liar] < 0 and fit.weights[liar] == 0.0
    assert np.isnan(fit.self_preference[liar])  # not a contestant


def test_self_reviews_are_not_trusted() -> None:
    # m1 crowns itself: PeerRank and equal weights let it climb, reliability does not.
    rs = encode_reviews(_logistic_reviews(seed=3))
    options = RankOptions(elo=False, bootstrap=0, weights="reliability")
    with_self = rank_reviews(rs, options)
    without = rank_reviews(encode_reviews(_logistic_reviews(seed=3), exclude_self=True), options)
    np.testing.assert_allclose(with_self.bt.rating, without.bt.rating, atol=3.0)
    equal = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights="equal"))
    m1 = rs.contestants.index("m1")
    assert equal.bt.rating[m1] - without.bt.rating[m1] > 10.0
    assert with_self.reliability is not None and with_self.reliability.converged
    np.testing.assert_allclose(with_self.peerrank.weights, with_self.reliability.weights)


def test_trusted_reviews_and_tensor_drop_exactly_the_own_battles() -> None:
    rs = encode_reviews(_logistic_reviews(questions=2))
    trusted = trusted_reviews(rs)
    own = rs.reviewer_as_contestant[rs.reviewer]
    assert trusted.n_battles == int(((own != rs.model_a) & (own != rs.model_b)).sum())
    assert trusted.n_self_excluded == rs.n_battles - trusted.n_battles
    win = tally_reviews(rs).win
    masked = trusted_tensor(win, rs.reviewer_as_contestant)
    np.testing.assert_allclose(masked, tally_reviews(trusted).win)


def test_elo_rates_the_trusted_battles_without_a_copy_when_nothing_else_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Too many battles for Elo's interval and no style: Elo is told which battles are
    trusted instead of rating a copy of them; the ranking is the same to the bit."""
    import arena.rank._ranking as ranking_module

    monkeypatch.setattr(ranking_module, "ELO_BOOTSTRAP_STEPS", 1)  # no Elo interval
    rs = encode_reviews(_logistic_reviews(seed=5, questions=30))
    options = RankOptions(elo_orders=7, bootstrap=20, weights="reliability")
    copies: list[int] = []
    real_copy = ranking_module.trusted_reviews

    def counted(*args: object) -> object:
        copies.append(1)
        return real_copy(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking_module, "trusted_reviews", counted)
    masked = rank_reviews(rs, options)
    assert not copies  # Elo rated the trusted battles of `rs` itself
    monkeypatch.setattr(ranking_module, "_reads_rated", lambda *args: True)
    copied = rank_reviews(rs, options)
    assert copies  # the copy, as when style control or Elo's interval reads it
    assert masked.elo is not None and copied.elo is not None
    np.testing.assert_array_equal(masked.elo.rating, copied.elo.rating)
    np.testing.assert_array_equal(masked.elo.weights, copied.elo.weights)
    np.testing.assert_array_equal(masked.elo_ci, copied.elo_ci)
    assert masked.elo_ci_rounds == copied.elo_ci_rounds == 0
    np.testing.assert_array_equal(masked.bt.rating, copied.bt.rating)
    assert masked.style_note == copied.style_note


def test_batch_and_bootstrap_features_agree_with_single_fits() -> None:
    rs = encode_reviews(_logistic_reviews(questions=12))
    counts = bootstrap_counts(rs.n_questions, 3, 5)
    played, won = resample_reliability(reliability_features(rs), counts)
    single = fit_reliability(rs)
    batch = fit_reliability_batch(played, won, rs.reviewer_as_contestant, start=single)
    for k in range(3):
        repeat = counts[k].astype(np.int64)[rs.question]
        rows = np.repeat(np.arange(rs.n_battles), repeat)
        frame = _logistic_reviews(questions=12)
        drawn = encode_reviews(frame[rows.tolist()]) if rows.size else rs
        cold = fit_reliability(drawn)
        np.testing.assert_allclose(batch.weights[k], cold.weights, atol=1e-6)


def test_reliability_weights_by_name() -> None:
    rs = encode_reviews(_logistic_reviews(questions=20))
    weights = reliability_weights(rs)
    assert set(weights) == set(rs.reviewers)
    assert sum(weights.values()) == pytest.approx(1.0)
    assert max(weights, key=weights.__getitem__) == "m3"


@pytest.mark.parametrize("block_cells", [1, 2 * 5 * 5 * 5 * 3, 10**9])
def test_bootstrap_resamples_a_block_of_questions_at_a_time_to_the_same_sums(
    monkeypatch: pytest.MonkeyPatch, block_cells: int
) -> None:
    """The bootstrap's resampled tallies (tallies and reliability features) come from a
    few questions' rows at a time: every blocking gives exactly the full products, and
    the compiled path makes the reliability rows of a block only when asked."""
    import arena.rank._aggregate as aggregate_module
    from arena.rank._aggregate import resample

    rs = encode_reviews(_logistic_reviews(seed=3, questions=14))
    counts = bootstrap_counts(rs.n_questions, 9, 2)
    tallies = tally_reviews(rs, per_question=True)
    assert tallies.features is not None
    whole = np.asarray(tallies.features.matrix, dtype=np.float64)
    features = reliability_features(rs)
    asked: list[tuple[int, int]] = []
    if features.rows is not None:  # the compiled path: rows on demand
        assert features.matrix.shape[0] == 0
        make = features.rows
        reliable = np.vstack([make(q, q + 1) for q in range(rs.n_questions)]).astype(np.float64)

        def counted(start: int, stop: int) -> np.ndarray:
            asked.append((start, stop))
            return make(start, stop)

        features = dataclasses.replace(features, rows=counted)
    else:
        reliable = np.asarray(features.matrix, dtype=np.float64)
    monkeypatch.setattr(aggregate_module, "_RESAMPLE_CELLS", block_cells)
    got = resample(tallies.features, counts)
    np.testing.assert_array_equal(got.reshape(9, -1), 0.5 * (counts @ whole))
    played, won = resample_reliability(features, counts)
    both = np.concatenate([played.reshape(9, -1), won.reshape(9, -1)], axis=1)
    np.testing.assert_array_equal(both, 0.5 * (counts @ reliable))
    if asked:  # each question's rows made once, in blocks that cover them in turn
        assert [q for start, stop in asked for q in range(start, stop)] == list(
            range(rs.n_questions)
        )
        per_block = max(1, block_cells // reliable.shape[1])
        assert len(asked) == -(-rs.n_questions // per_block)
