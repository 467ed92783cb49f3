"""Length-controlled win rates against a baseline (arena.rank.length_controlled_win_rates)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from arena.rank import (
    DEFAULT_PRIOR_MEAN,
    DEFAULT_PRIOR_SD,
    TABLE_PRIOR_SD,
    baseline_win_rates,
    encode_reviews,
    length_controlled_win_rates,
    reference_difficulty,
)

# True strengths against the baseline `ref` (logits): `padder` and `short` are
# exactly as good as the baseline, `padder` always answers longer and `short`
# shorter; `solid` is better, at about the baseline's length.
STRENGTH = {"padder": 0.0, "short": 0.0, "solid": 0.6}
LENGTH_EFFECT = 1.5  # the judge's preference for the longer answer


def _reviews(
    questions: int = 300, seed: int = 7, length_effect: float = LENGTH_EFFECT
) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(questions):
        difficulty = rng.normal(0.0, 0.5)
        ref_length = rng.uniform(1000, 2000)
        lengths = {
            "padder": ref_length + rng.uniform(200, 1800),
            "short": max(ref_length - rng.uniform(200, 900), 50.0),
            "solid": max(ref_length + rng.normal(0.0, 400.0), 50.0),
        }
        for k, (model, length) in enumerate(lengths.items()):
            logit = (
                STRENGTH[model]
                - difficulty
                + length_effect * math.tanh((length - ref_length) / 800.0)
            )
            model_wins = rng.random() < 1.0 / (1.0 + math.exp(-logit))
            model_first = (q + k) % 2 == 0
            if model_first:
                a, b, len_a, len_b = model, "ref", length, ref_length
                verdict = "A" if model_wins else "B"
            else:
                a, b, len_a, len_b = "ref", model, ref_length, length
                verdict = "B" if model_wins else "A"
            rows.append(
                {
                    "question_id": f"q{q}",
                    "model_a": a,
                    "model_b": b,
                    "reviewer": "judge",
                    "verdict": verdict,
                    "length_a": round(len_a),
                    "length_b": round(len_b),
                }
            )
    return pl.DataFrame(rows)


def test_a_model_that_wins_by_length_loses_its_edge() -> None:
    rs = encode_reviews(_reviews())
    raw = {r.model: r.win_rate for r in baseline_win_rates(rs, "ref", bootstrap=0)}
    fit = length_controlled_win_rates(rs, "ref", bootstrap=60, seed=1)
    lc = {r.model: r for r in fit.rates}
    assert set(lc) == {"padder", "short", "solid"}
    # Raw: the padder beats the better model; length-controlled: the order is the true one.
    assert raw["padder"] > raw["solid"] > raw["short"]
    assert lc["solid"].lc_win_rate > lc["padder"].lc_win_rate
    assert lc["solid"].lc_win_rate > lc["short"].lc_win_rate
    # The two models as good as the baseline are about 50% at its length.
    assert abs(lc["padder"].lc_win_rate - 0.5) < 0.08
    assert abs(lc["short"].lc_win_rate - 0.5) < 0.08
    assert raw["padder"] - lc["padder"].lc_win_rate > 0.1
    assert lc["short"].lc_win_rate - raw["short"] > 0.05
    for r in fit.rates:
        assert 0.0 <= r.lc_ci_low <= r.lc_win_rate <= r.lc_ci_high <= 1.0
        assert r.n == 300
    assert lc["padder"].lc_ci_low < 0.5 < lc["padder"].lc_ci_high
    # A length coefficient per model, near the default prior's centre (the judge likes length).
    assert all(0.6 < r.length_coef < 1.3 for r in fit.rates)
    assert all(r.length_sd > 0 for r in fit.rates)
    assert fit.difficulty is None and fit.length_sd > 0
    assert (fit.prior_mean, fit.prior_sd) == (DEFAULT_PRIOR_MEAN, DEFAULT_PRIOR_SD)


def test_a_model_s_figure_is_its_own() -> None:
    # Per model (the default), a model's figure is the same alone as with the others,
    # with or without the bootstrap.
    frame = _reviews(questions=150)
    everyone = length_controlled_win_rates(encode_reviews(frame), "ref", bootstrap=25, seed=2)
    for rate in everyone.rates:
        alone = frame.filter((pl.col("model_a") == rate.model) | (pl.col("model_b") == rate.model))
        (own,) = length_controlled_win_rates(encode_reviews(alone), "ref", bootstrap=0).rates
        assert own.lc_win_rate == pytest.approx(rate.lc_win_rate, abs=1e-9)
        assert own.length_coef == pytest.approx(rate.length_coef, abs=1e-9)


def test_same_seed_same_interval_and_point_estimate_without_bootstrap() -> None:
    rs = encode_reviews(_reviews(questions=120))
    one = length_controlled_win_rates(rs, "ref", bootstrap=20, seed=3)
    two = length_controlled_win_rates(rs, "ref", bootstrap=20, seed=3)
    assert one.rates == two.rates
    per_model = length_controlled_win_rates(rs, "ref", bootstrap=0)
    assert [r.lc_win_rate for r in per_model.rates] == [r.lc_win_rate for r in one.rates]
    assert all(math.isnan(r.lc_ci_low) for r in per_model.rates)  # no bootstrap: no interval


def test_a_reference_table_fixes_difficulties_and_the_slope() -> None:
    # The table from the reference set: one difficulty per question, the judge's slope.
    frame = _reviews(questions=300)
    table = reference_difficulty(encode_reviews(frame), "ref")
    assert table.reference_models == ("padder", "short", "solid")
    assert len(table.questions) == 300 and table.battles == 900
    assert 0.8 < table.length_coef < 2.5  # the judge's 1.5 logits, through tanh
    assert float(np.std(table.difficulty)) > 0.1
    fit = length_controlled_win_rates(encode_reviews(frame), "ref", bootstrap=0, difficulty=table)
    assert fit.difficulty is table
    assert (fit.prior_mean, fit.prior_sd) == (table.length_coef, TABLE_PRIOR_SD)
    lc = {r.model: r.lc_win_rate for r in fit.rates}
    assert lc["solid"] > lc["padder"] and lc["solid"] > lc["short"]
    assert abs(lc["padder"] - 0.5) < 0.08 and abs(lc["short"] - 0.5) < 0.08
    # A table for another baseline, or one that lacks questions played: refused.
    other = reference_difficulty(encode_reviews(frame), "solid")
    with pytest.raises(ValueError, match="built against 'solid'"):
        length_controlled_win_rates(encode_reviews(frame), "ref", difficulty=other)
    few = reference_difficulty(encode_reviews(frame.filter(pl.col("question_id") != "q0")), "ref")
    with pytest.raises(ValueError, match="1 question"):
        length_controlled_win_rates(encode_reviews(frame), "ref", difficulty=few)


def test_equal_lengths_reproduce_the_win_rate() -> None:
    # No length difference: the tanh term is 0 and the fit's score equation for
    # each strength makes the mean predicted win equal the observed win rate.
    frame = _reviews(questions=150, length_effect=0.0).with_columns(
        pl.lit(500).alias("length_a"), pl.lit(500).alias("length_b")
    )
    rs = encode_reviews(frame)
    raw = {r.model: r.win_rate for r in baseline_win_rates(rs, "ref", bootstrap=0)}
    fit = length_controlled_win_rates(rs, "ref", bootstrap=0)
    assert fit.length_sd == 0.0
    for r in fit.rates:
        assert r.lc_win_rate == pytest.approx(raw[r.model], abs=2e-3)


def test_graded_shares_and_weights_count() -> None:
    # A graded share of 0.9 counts as 0.9 of a win; a battle of weight 3 as three.
    frame = _reviews(questions=80)
    plain = length_controlled_win_rates(encode_reviews(frame), "ref", bootstrap=0)
    tripled = length_controlled_win_rates(
        encode_reviews(frame.with_columns(pl.lit(3.0).alias("weight"))), "ref", bootstrap=0
    )
    for a, b in zip(plain.rates, tripled.rates, strict=True):
        assert a.lc_win_rate == pytest.approx(b.lc_win_rate, abs=0.02)
    graded = frame.with_columns(
        pl.when(pl.col("verdict") == "A").then(0.9).otherwise(0.1).alias("p_a")
    )
    # At equal lengths the fit reproduces the graded win rate: 0.1 + 0.8 x the discrete one.
    level = graded.with_columns(pl.lit(500).alias("length_a"), pl.lit(500).alias("length_b"))
    raw = {r.model: r.win_rate for r in baseline_win_rates(encode_reviews(frame), "ref")}
    softer = length_controlled_win_rates(encode_reviews(level), "ref", bootstrap=0)
    for r in softer.rates:
        assert r.lc_win_rate == pytest.approx(0.1 + 0.8 * raw[r.model], abs=2e-3)


def test_bad_input() -> None:
    frame = _reviews(questions=10)
    with pytest.raises(ValueError, match="needs the answers' lengths"):
        length_controlled_win_rates(
            encode_reviews(frame.drop("length_a", "length_b")), "ref", bootstrap=0
        )
    rs = encode_reviews(frame)
    with pytest.raises(ValueError, match="not a contestant"):
        length_controlled_win_rates(rs, "nobody")
    with pytest.raises(ValueError, match="not a contestant"):
        reference_difficulty(rs, "nobody")
