"""The public surface of arena.rank is a contract."""

from __future__ import annotations

import arena.rank as rank


def test_public_names() -> None:
    assert set(rank.__all__) >= {
        "encode_reviews",
        "tally_reviews",
        "peerrank",
        "win_counts",
        "weighted_elo",
        "bradley_terry",
        "fit_bradley_terry",
        "reviewer_diagnostics",
        "pairwise_win_rates",
        "reviewer_fleiss_kappa",
        "fleiss_kappa",
        "human_agreement",
        "rank_reviews",
        "RankOptions",
        "Ranking",
        "ReviewSet",
        # Robust PeerRank, intervals and style control (docs/ranking.md, "The public rank API").
        "solve_weights",
        "FixedPoint",
        "rank_models",
        "RankTable",
        "NeighbourTest",
        "fit_style_control",
        "StyleFit",
        "answer_style",
        "length_bias",
        "equal_win_rates",
        "STYLE_FEATURES",
        "WEIGHTINGS",
    }
    for name in rank.__all__:
        assert hasattr(rank, name), name
    assert sorted(rank.__all__) == sorted(set(rank.__all__))


def test_rank_stays_pure() -> None:
    import ast
    from pathlib import Path

    for path in Path(rank.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                for name in names:
                    assert not name.startswith(("asyncio", "arena.store", "arena.report")), (
                        f"{path.name} imports {name}"
                    )
                    if name.startswith("arena."):
                        assert name.startswith(("arena.rank", "arena.types")), name
