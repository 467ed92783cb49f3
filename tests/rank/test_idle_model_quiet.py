"""A contestant without a single counted battle ranks quietly (no numpy warning on stderr)."""

from __future__ import annotations

import warnings

import numpy as np

from arena.rank import RankOptions, encode_reviews, rank_reviews
from tests.rank._frames import frame
from tests.rank.test_robust import NO_SELF_12


def test_a_model_without_battles_raises_no_all_nan_warning() -> None:
    rs = encode_reviews(frame(NO_SELF_12), contestants=["X", "Y", "Z", "Idle"])
    idle = rs.contestants.index("Idle")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "All-NaN slice encountered" would raise
        ranking = rank_reviews(rs, RankOptions(bootstrap=40, elo_orders=4, seed=1))
    # The idle model has no interval; the others have finite ones.
    assert np.isnan(ranking.win_rate_ci[:, idle]).all()
    others = [i for i in range(len(rs.contestants)) if i != idle]
    assert np.isfinite(ranking.win_rate_ci[:, others]).all()
