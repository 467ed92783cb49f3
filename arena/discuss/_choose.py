"""Who discusses a battle (`discussants`) and who speaks first (`leader`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import polars as pl

from arena.config import DiscussionConfig

__all__ = ["choose_leader", "discussant_pairs", "ranked_reviewers", "top2"]


def ranked_reviewers(
    reviews: pl.DataFrame, contestants: Sequence[str], reviewers: Sequence[str]
) -> list[str]:
    """Every reviewer, highest PeerRank weight first, in a reviews frame.

    Ties (and a frame without a counted review, where all weights are equal)
    are broken by the order of `reviewers`.
    """
    # Imported here: `arena plan` and `arena status` load this module with the stage.
    from arena.rank import RankOptions, encode_reviews, rank_reviews

    weights = np.full(len(reviewers), 1.0 / max(1, len(reviewers)))
    if reviews.height:
        rs = encode_reviews(reviews, contestants=contestants, reviewers=reviewers)
        if rs.n_battles:
            weights = rank_reviews(rs, RankOptions(bootstrap=0, elo=False)).peerrank.weights
    order = sorted(range(len(reviewers)), key=lambda i: (-round(float(weights[i]), 12), i))
    return [reviewers[i] for i in order]


def top2(
    reviews: pl.DataFrame,
    contestants: Sequence[str],
    reviewers: Sequence[str],
    exclude: Sequence[str] = (),
) -> list[str]:
    """The two reviewers with the highest PeerRank weights, leaving out `exclude`.

    `exclude` is a battle's two contestants unless the section allows them to
    discuss it (`allow_contestants`).
    """
    eligible = [r for r in ranked_reviewers(reviews, contestants, reviewers) if r not in exclude]
    if len(eligible) < 2:
        raise ValueError("top2 needs at least two eligible reviewers")
    return eligible[:2]


def discussant_pairs(
    cfg: DiscussionConfig, top: Sequence[str] | None = None, contestants: Sequence[str] = ()
) -> list[list[str]]:
    """The pairs that discuss one battle whose contestants are `contestants`.

    `top` is the reviewers ranked by weight (see `ranked_reviewers`; at least
    the two top ones) when the section uses top2. Unless the section sets
    `allow_contestants`, no pair includes a contestant of the battle: top2 takes
    the two highest-ranked reviewers that are not, and a named pair (or one of
    all-pairs) with a contestant in it does not discuss that battle.
    """
    excluded = set() if cfg.allow_contestants else set(contestants)
    if isinstance(cfg.discussants, list):
        pairs = [list(cfg.discussants)]
    elif isinstance(cfg.discussants, dict):
        pairs = [list(p) for p in combinations(cfg.discussants["all-pairs"], 2)]
    else:
        if top is None or len(top) < 2:
            raise ValueError("discussants: top2 needs the reviewers ranked by weight")
        eligible = [name for name in top if name not in excluded]
        return [eligible[:2]] if len(eligible) >= 2 else []
    return [p for p in pairs if not excluded & set(p)]


def _coin(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return digest[0] & 1


def choose_leader(
    cfg: DiscussionConfig, pair: Sequence[str], *, seed: int, battle_id: str, index: int
) -> str:
    """The discussant who speaks first.

    random: a coin seeded by (seed, battle, pair), so the same in every run;
    alternate: the pair's members in turn along the tournament's battle order
    (`index`); a model name: that model when it is in the pair, else random;
    both: the battle is discussed once with each leading (the stage asks for
    both orders), so here the pair's first member.
    """
    if cfg.leader == "both":
        return pair[0]
    if cfg.leader == "alternate":
        return pair[index % 2]
    if cfg.leader in pair:
        return cfg.leader
    return pair[_coin(seed, "leader", battle_id, *pair)]
