"""Each judge diagnostic on a constructed table with a hand-computed answer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.rank import (
    encode_reviews,
    fleiss_kappa,
    pairwise_win_rates,
    peerrank,
    reviewer_diagnostics,
    reviewer_fleiss_kappa,
    tally_reviews,
)
from tests.rank._frames import frame

# Judge J (not a contestant) and contestant X review battles of X and Y.
ROWS = [
    # J: prefers whatever is shown first on q1 (inconsistent), ties both on q2.
    ("q1", "X", "Y", "J", "A"),
    ("q1", "Y", "X", "J", "A"),
    ("q2", "X", "Y", "J", "tie"),
    ("q2", "Y", "X", "J", "tie"),
    # X: always picks itself; one unreadable verdict on q2.
    ("q1", "X", "Y", "X", "A"),
    ("q1", "Y", "X", "X", "B"),
    ("q2", "X", "Y", "X", "invalid"),
    ("q2", "Y", "X", "X", "B"),
]


@pytest.fixture
def diagnostics():  # type: ignore[no-untyped-def]
    rs = encode_reviews(frame(ROWS))
    tallies = tally_reviews(rs, per_question=False)
    weights = peerrank(tallies).weights
    return rs, tallies, {d.reviewer: d for d in reviewer_diagnostics(tallies, weights)}


def test_position_a_share(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, _, d = diagnostics
    assert d["J"].position_a_share == pytest.approx(1.0)  # 2 decisive, both A
    assert d["X"].position_a_share == pytest.approx(1 / 3)  # A, B, B


def test_swap_consistency(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, _, d = diagnostics
    assert d["J"].swap_consistency == pytest.approx(0.5)  # q1 flips, q2 tie/tie agrees
    # q2 has only one readable order for X: not judged.
    assert d["X"].swap_consistency == pytest.approx(1.0)


def test_self_preference(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, _, d = diagnostics
    # X gives itself 3 wins of 3; J gives X 1 + 0 + 1/2 + 1/2 of 4.
    assert d["X"].self_preference == pytest.approx(1.0 - 0.5)
    assert math.isnan(d["J"].self_preference)


def test_tie_and_invalid_rates(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, _, d = diagnostics
    assert d["J"].tie_rate == pytest.approx(0.5)
    assert d["X"].tie_rate == pytest.approx(0.0)
    assert d["J"].invalid_rate == pytest.approx(0.0)
    assert d["X"].invalid_rate == pytest.approx(0.25)
    assert d["J"].battles == 4 and d["X"].battles == 3


def test_pairwise_matrix(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, tallies, _ = diagnostics
    matrix = pairwise_win_rates(tallies.win)
    # X's win value: J 1 + 0 + 0.5 + 0.5, X 1 + 1 + 1 -> 5 of 7.
    assert matrix[0, 1] == pytest.approx(5 / 7)
    assert matrix[1, 0] == pytest.approx(2 / 7)
    assert math.isnan(matrix[0, 0])


def test_fleiss_kappa_between_reviewers(diagnostics) -> None:  # type: ignore[no-untyped-def]
    _, tallies, _ = diagnostics
    # Battles with 2+ verdicts: q1 XY {A, A}, q1 YX {A, B}, q2 YX {tie, B}.
    # P = (1 + 0 + 0)/3; p = (A 3, B 2, tie 1)/6; Pe = 14/36; kappa = -1/11.
    assert reviewer_fleiss_kappa(tallies) == pytest.approx(-1 / 11)


def test_fleiss_kappa_textbook_cases() -> None:
    # Perfect agreement on varied subjects -> 1.
    assert fleiss_kappa(np.array([[3, 0], [0, 3], [3, 0]])) == pytest.approx(1.0)
    # Fleiss (1971)-style small example computed by hand:
    # subjects (2,1,0), (0,3,0), (1,1,1): P = (1/3, 1, 0) -> 4/9;
    # p = (3, 5, 1)/9 -> Pe = 35/81; kappa = (4/9 - 35/81) / (46/81) = 1/46.
    table = np.array([[2, 1, 0], [0, 3, 0], [1, 1, 1]])
    assert fleiss_kappa(table) == pytest.approx(1 / 46)
    assert math.isnan(fleiss_kappa(np.array([[1, 0], [0, 1]])))  # nobody rated twice


def test_diagnostics_of_every_reviewer_are_listed(diagnostics) -> None:  # type: ignore[no-untyped-def]
    rs, _, d = diagnostics
    assert list(d) == list(rs.reviewers)
    assert sum(x.weight for x in d.values()) == pytest.approx(1.0)
