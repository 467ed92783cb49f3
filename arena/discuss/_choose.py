"""Who discusses a battle (`discussants`) and who speaks first (`leader`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import polars as pl

from arena.config import DiscussionConfig
from arena.rank import RankOptions, encode_reviews, rank_reviews

__all__ = ["choose_leader", "discussant_pairs", "top2"]


def top2(reviews: pl.DataFrame, contestants: Sequence[str], reviewers: Sequence[str]) -> list[str]:
    """The two reviewers with the highest PeerRank weights in a reviews frame.

    Ties (and a frame without a counted review, where all weights are equal)
    are broken by the order of `reviewers`.
    """
    if len(reviewers) < 2:
        raise ValueError("top2 needs at least two reviewers")
    weights = np.full(len(reviewers), 1.0 / len(reviewers))
    if reviews.height:
        rs = encode_reviews(reviews, contestants=contestants, reviewers=reviewers)
        if rs.n_battles:
            weights = rank_reviews(rs, RankOptions(bootstrap=0, elo=False)).peerrank.weights
    order = sorted(range(len(reviewers)), key=lambda i: (-round(float(weights[i]), 12), i))
    return [reviewers[order[0]], reviewers[order[1]]]


def discussant_pairs(cfg: DiscussionConfig, top: Sequence[str] | None = None) -> list[list[str]]:
    """The pairs that discuss each selected battle; `top` is the top2 result when needed."""
    if isinstance(cfg.discussants, list):
        return [list(cfg.discussants)]
    if isinstance(cfg.discussants, dict):
        return [list(p) for p in combinations(cfg.discussants["all-pairs"], 2)]
    if top is None or len(top) != 2:
        raise ValueError("discussants: top2 needs the two top reviewers")
    return [list(top)]


def _coin(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return digest[0] & 1


def choose_leader(
    cfg: DiscussionConfig, pair: Sequence[str], *, seed: int, battle_id: str, index: int
) -> str:
    """The discussant who speaks first.

    random: a coin seeded by (seed, battle, pair), so the same in every run;
    alternate: the pair's members in turn along the tournament's battle order
    (`index`); a model name: that model when it is in the pair, else random.
    """
    if cfg.leader == "alternate":
        return pair[index % 2]
    if cfg.leader in pair:
        return cfg.leader
    return pair[_coin(seed, "leader", battle_id, *pair)]
