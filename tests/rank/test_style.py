"""Style control: feature counting, length bias by hand, recovery of a known truth."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.rank import (
    RankOptions,
    answer_style,
    encode_reviews,
    fit_style_control,
    kendall_tau,
    length_bias,
    rank_reviews,
)
from tests.rank._frames import frame


def test_answer_style_counts_length_and_markdown() -> None:
    text = "# Title\nSome **bold** text and __more__.\n\n- one\n* two\n3. three\nnot-a-list\n"
    style = answer_style(pl.Series([text, "", None]))
    assert style.row(0) == (float(len(text)), 1.0, 3.0, 2.0)
    assert style.row(1) == (0.0, 0.0, 0.0, 0.0)
    assert style.row(2) == (None, None, None, None)


def test_length_bias_by_hand() -> None:
    reviews = frame(
        [
            ("q1", "X", "Y", "J", "A"),  # longer (X, 10 > 5) wins
            ("q1", "Y", "X", "J", "A"),  # shorter wins
            ("q2", "X", "Y", "J", "A"),  # longer wins
            ("q2", "Y", "X", "J", "tie"),  # not decisive
            ("q3", "X", "Y", "J", "B"),  # equal lengths: left out
            ("q1", "X", "Y", "K", "B"),  # shorter wins
        ]
    ).with_columns(
        length_a=pl.Series([10.0, 5.0, 10.0, 5.0, 7.0, 10.0]),
        length_b=pl.Series([5.0, 10.0, 5.0, 10.0, 7.0, 5.0]),
    )
    bias = length_bias(encode_reviews(reviews))
    assert bias is not None
    np.testing.assert_allclose(bias, [2 / 3, 0.0])
    assert length_bias(encode_reviews(frame([("q1", "X", "Y", "J", "A")]))) is None


def _verbose_tournament(seed: int = 0, questions: int = 24) -> tuple[pl.DataFrame, np.ndarray]:
    """Five models; the weakest writes 2.5x longer answers; judges favour length."""
    rng = np.random.default_rng(seed)
    skill = np.array([1.0, 0.5, 0.0, -0.5, -1.0])
    words = np.array([60.0, 60.0, 60.0, 60.0, 150.0])
    names = [f"m{i}" for i in range(skill.size)]
    rows = []
    for q in range(questions):
        quality = skill + rng.normal(0, 0.4, skill.size)
        length = words * np.exp(rng.normal(0, 0.3, skill.size))
        for i in range(skill.size):
            for j in range(skill.size):
                if i == j:
                    continue
                gap = (length[i] - length[j]) / ((length[i] + length[j]) / 2)
                for r in names:
                    diff = quality[i] - quality[j] + 1.5 * gap + rng.normal(0, 0.5)
                    verdict = "A" if diff > 0.1 else "B" if diff < -0.1 else "tie"
                    rows.append((f"q{q}", names[i], names[j], r, verdict, length[i], length[j]))
    schema = ["question_id", "model_a", "model_b", "reviewer", "verdict", "length_a", "length_b"]
    return pl.DataFrame(rows, schema=schema, orient="row"), skill


def test_style_control_recovers_the_true_order() -> None:
    reviews, skill = _verbose_tournament()
    ranking = rank_reviews(encode_reviews(reviews), RankOptions(elo=False, bootstrap=60))
    style = ranking.style
    assert style is not None and ranking.style_ranks is not None
    assert style.features == ("length",)
    assert style.dropped == ()
    assert kendall_tau(ranking.bt.rating, skill) < 0.9  # the verbose model is overrated
    assert kendall_tau(style.rating, skill) == 1.0
    assert 0 < style.coef_low[0] < style.coef[0] < style.coef_high[0]
    assert style.converged and style.weights.sum() == pytest.approx(1.0)
    assert np.all(style.ci_low <= style.rating) and np.all(style.rating <= style.ci_high)
    assert ranking.style_ranks.rank.tolist() == [1, 2, 3, 4, 5]
    bias = ranking.length_bias
    assert bias is not None and np.all(bias > 0.55)


def test_style_control_says_why_it_is_unavailable() -> None:
    plain = frame([("q1", "X", "Y", "J", "A"), ("q2", "Y", "X", "J", "tie")])
    ranking = rank_reviews(encode_reviews(plain), RankOptions(elo=False, bootstrap=0))
    assert ranking.style is None
    assert ranking.style_note == "the reviews carry no answer text or lengths"
    same = plain.with_columns(length_a=pl.lit(5.0), length_b=pl.lit(5.0))
    ranking = rank_reviews(encode_reviews(same), RankOptions(elo=False, bootstrap=0))
    assert ranking.style is None and ranking.style_note is not None
    assert "do not differ" in ranking.style_note
    partial = plain.with_columns(length_a=pl.Series([5.0, None]), length_b=pl.lit(4.0))
    with pytest.raises(ValueError, match="lack answer style"):
        fit_style_control(encode_reviews(partial))


def test_equal_weights_give_equal_style_weights() -> None:
    reviews, _ = _verbose_tournament(seed=1, questions=8)
    ranking = rank_reviews(
        encode_reviews(reviews), RankOptions(elo=False, bootstrap=0, weights="equal")
    )
    assert ranking.style is not None
    np.testing.assert_allclose(ranking.style.weights, np.full(5, 0.2))
    np.testing.assert_allclose(ranking.peerrank.weights, np.full(5, 0.2))
    np.testing.assert_allclose(ranking.peerrank.weighted_win_rate, ranking.peerrank.win_rate)


def _style_bootstrap(reviews: pl.DataFrame, max_iter: int = 100) -> tuple[np.ndarray, ...]:
    from arena.rank import bootstrap_counts

    rs = encode_reviews(reviews)
    fit = fit_style_control(
        rs, bootstrap_counts=bootstrap_counts(rs.n_questions, 40, 3), max_iter=max_iter
    )
    assert fit.boot_rating is not None
    return fit.rating, fit.boot_rating, fit.coef_low, fit.coef_high, fit.weights


@pytest.mark.parametrize("max_iter", [100, 2])
def test_bootstrap_rounds_fitted_by_the_shortcut_equal_the_full_way(
    monkeypatch: pytest.MonkeyPatch, max_iter: int
) -> None:
    """Bootstrap rounds take one Newton step per weight update, then are checked (and
    solved again the full way where the check fails, as with `max_iter` 2, where the
    weights cannot settle); the intervals equal those of full Newton fits."""
    reviews, _ = _verbose_tournament(seed=2, questions=16)
    shortcut = _style_bootstrap(reviews, max_iter)
    monkeypatch.setattr("arena.rank._style._BOOT_NEWTON_STEPS", 60)
    full = _style_bootstrap(reviews, max_iter)
    for ours, theirs in zip(shortcut, full, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)


def test_markdown_counts_skip_fenced_code() -> None:
    from arena.rank import answer_style

    texts = pl.Series(
        [
            "# Title\n```python\n# a comment\n- not a list\nx = a**b**c\n```\n- item\n**bold**\n",
            "~~~\n# still code\n~~~\n## Real header\n",
            "```\n# an unclosed fence runs to the end\n- so this is code\n",
        ]
    )
    style = answer_style(texts)
    assert style["headers"].to_list() == [1.0, 1.0, 0.0]
    assert style["lists"].to_list() == [1.0, 0.0, 0.0]
    assert style["bold"].to_list() == [1.0, 0.0, 0.0]
    assert style["length"].to_list() == [float(len(t)) for t in texts.to_list()]
