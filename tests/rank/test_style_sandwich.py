"""Style control's sandwich intervals: statsmodels' clustered GLM, the seed, the bootstrap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.rank import ELO_PER_NAT, Z_95, RankOptions, encode_reviews, rank_reviews


def _styled_reviews(seed: int, questions: int = 40) -> pl.DataFrame:
    """One judge, no ties, a question effect, and judges swayed by answer length."""
    rng = np.random.default_rng(seed)
    skill = {"m0": 0.0, "m1": 0.4, "m2": -0.3, "m3": 0.9}
    words = {"m0": 50.0, "m1": 80.0, "m2": 120.0, "m3": 60.0}
    rows = []
    for q in range(questions):
        quality = {m: s + rng.normal(0, 0.6) for m, s in skill.items()}
        length = {m: w * np.exp(rng.normal(0, 0.4)) for m, w in words.items()}
        for a in skill:
            for b in skill:
                if a != b and rng.random() < 0.8:
                    gap = (length[a] - length[b]) / (length[a] + length[b])
                    p = 1 / (1 + np.exp(-(quality[a] - quality[b] + 2.0 * gap)))
                    verdict = "A" if rng.random() < p else "B"
                    rows.append((f"q{q}", a, b, "J", verdict, length[a], length[b]))
    schema = ["question_id", "model_a", "model_b", "reviewer", "verdict", "length_a", "length_b"]
    return pl.DataFrame(rows, schema=schema, orient="row")


def test_style_sandwich_matches_statsmodels_cluster_robust_glm() -> None:
    sm = pytest.importorskip("statsmodels.api")
    reviews = _styled_reviews(1)
    rs = encode_reviews(reviews)
    ranking = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights="equal", anchor="m0"))
    style = ranking.style
    assert style is not None and style.covariance is not None and style.bootstrap_rounds == 0
    # The same model as a logistic GLM: a column per model but the anchor, and the
    # normalised length difference scaled to unit root mean square.
    names = list(rs.contestants)
    others = [n for n in names if n != "m0"]
    x = np.zeros((reviews.height, len(others) + 1))
    for row, (a, b) in enumerate(zip(reviews["model_a"], reviews["model_b"], strict=True)):
        if a != "m0":
            x[row, others.index(a)] += 1.0
        if b != "m0":
            x[row, others.index(b)] -= 1.0
    la, lb = reviews["length_a"].to_numpy(), reviews["length_b"].to_numpy()
    d = (la - lb) / (la + lb)
    x[:, -1] = d / np.sqrt(np.mean(d**2))
    y = (reviews["verdict"] == "A").to_numpy().astype(float)
    groups = reviews["question_id"].str.slice(1).cast(pl.Int64).to_numpy()
    fit = sm.GLM(y, x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    q = rs.n_questions
    expected = np.asarray(fit.cov_params()) * q / (q - 1)
    index = [names.index(n) for n in others]
    # The fit's weak priors move the estimates by about 1e-5 of their size.
    np.testing.assert_allclose(
        style.covariance[np.ix_(index, index)], expected[:-1, :-1] * ELO_PER_NAT**2, rtol=1e-4
    )
    np.testing.assert_allclose(
        style.rating[index] - 1000.0, np.asarray(fit.params)[:-1] * ELO_PER_NAT, atol=1e-2
    )
    coef_sd = float(np.sqrt(expected[-1, -1]))
    assert style.coef[0] == pytest.approx(float(fit.params[-1]), rel=1e-4)
    assert style.coef_low[0] == pytest.approx(float(fit.params[-1]) - Z_95 * coef_sd, rel=1e-4)
    assert style.coef_high[0] == pytest.approx(float(fit.params[-1]) + Z_95 * coef_sd, rel=1e-4)
    anchor = names.index("m0")
    assert style.ci_low[anchor] == style.ci_high[anchor] == 1000.0


def test_style_intervals_do_not_move_with_the_seed_and_agree_with_a_long_bootstrap() -> None:
    """The ranking issue's stability target (interval ends within 2 points between
    seeds) holds exactly; the bootstrap's ends, even at 2,000 rounds, still wobble."""
    rs = encode_reviews(_styled_reviews(3, questions=30))
    runs = [rank_reviews(rs, RankOptions(elo=False, bootstrap=200, seed=s)) for s in (0, 7)]
    for ranking in runs:
        assert ranking.style is not None and ranking.style_ranks is not None
    first, second = (r.style for r in runs)
    assert first is not None and second is not None
    np.testing.assert_array_equal(first.ci_low, second.ci_low)
    np.testing.assert_array_equal(first.ci_high, second.ci_high)
    np.testing.assert_array_equal(first.coef_low, second.coef_low)
    assert [n.share for n in runs[0].style_ranks.neighbours] == [  # type: ignore[union-attr]
        n.share
        for n in runs[1].style_ranks.neighbours  # type: ignore[union-attr]
    ]
    reference = rank_reviews(
        rs, RankOptions(elo=False, bootstrap=2000, seed=1, intervals="bootstrap")
    ).style
    assert reference is not None and reference.covariance is None
    assert reference.bootstrap_rounds == 2000
    # Same point, and intervals of the same width (the bootstrap also refits the weights).
    np.testing.assert_allclose(first.rating, reference.rating, atol=1e-6)
    np.testing.assert_allclose(
        first.ci_high - first.ci_low, reference.ci_high - reference.ci_low, rtol=0.1
    )
    assert first.coef_low[0] == pytest.approx(reference.coef_low[0], abs=0.06)
    assert first.coef_high[0] == pytest.approx(reference.coef_high[0], abs=0.06)


def test_leaderboard_style_intervals_are_the_same_for_every_seed(tmp_path: Path) -> None:
    """`arena leaderboard --seed S`: the style-controlled interval ends do not move (the
    sandwich's); with `--intervals bootstrap` they are the bootstrap's, which do."""
    path = tmp_path / "reviews.csv"
    _styled_reviews(5, questions=20).write_csv(path)

    def board(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(
            leaderboard, ["--reviews", str(path), "--format", "json", "--elo-orders", "0", *args]
        )
        assert result.exit_code == 0, result.output
        data: dict[str, Any] = json.loads(result.output)
        assert data["style_control"]["available"] is True
        return data

    def ends(data: dict[str, Any]) -> list[tuple[float, float]]:
        return [(m["bt_style_ci_low"], m["bt_style_ci_high"]) for m in data["models"]]

    first, second = board("--seed", "0"), board("--seed", "3")
    assert ends(first) == ends(second)
    assert first["style_control"]["bootstrap_rounds"] == 0
    assert first["style_control"]["coefficients"] == second["style_control"]["coefficients"]
    boot = [board("--seed", s, "--intervals", "bootstrap", "--bootstrap", "50") for s in "03"]
    assert boot[0]["style_control"]["bootstrap_rounds"] == 50
    assert ends(boot[0]) != ends(boot[1])
