"""Biases that can make a ranking confident and wrong, measured and said in words.

Three checks on a finished ranking, each a line for the JSON `warnings` and
the table's notes when it fires:

- style effect: style control's coefficient of a feature (answer length, markdown)
  whose 95% interval excludes 0 and whose size is at least STYLE_EFFECT_MIN
  log-odds per root-mean-square unit; the line names the feature, its
  coefficient and interval, and how far the style-controlled order is from
  the raw Bradley-Terry order (Kendall tau);
- position bias: a reviewer whose share of decisive verdicts for the answer
  shown first, over the battles it judged in both orders (the strengths
  cancel), differs from 1/2 by at least POSITION_MIN and by more than three
  binomial standard errors;
- reviewer blocs: reviewers that agree with each other far more than with the
  rest. Agreement of two reviewers is the share of the battles (question, models
  in their positions) both judged on which they gave the same verdict. A bloc is
  a group of at least two reviewers, joined where a pair's agreement exceeds
  each one's mean agreement with the reviewers outside the pair by BLOC_MARGIN,
  and whose mean agreement within exceeds the mean with the rest by BLOC_MARGIN
  and each outside reviewer's mean agreement with the group by BLOC_MARGIN / 2;
  fewer than half the reviewers (a majority that agrees is the consensus).
  The line names every member, the two agreements and the bloc's share of the
  reviewer weights (said to be outsized when above its share of the reviewers).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._style import STYLE_EFFECT_MIN, significant_features

if TYPE_CHECKING:
    from arena.rank._ranking import Ranking

__all__ = [
    "BLOC_MARGIN",
    "POSITION_MIN",
    "STYLE_EFFECT_MIN",
    "bias_warnings",
    "reviewer_agreement",
    "reviewer_blocs",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

POSITION_MIN = 0.1
BLOC_MARGIN = 0.25
# Battles x reviewers beyond which the agreement matrix is not built (a crowd log).
_AGREEMENT_CELLS = 50_000_000
# Reviews handled at a time where a review needs an 8-byte key.
_SLICE = 1 << 18


def _kendall(x: FloatArray, y: FloatArray) -> float:
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = x.shape[0]
    if n < 2:
        return float("nan")
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(n, 1)
    concordant = float((dx * dy)[upper].sum())
    tx = float(np.count_nonzero(dx[upper]))
    ty = float(np.count_nonzero(dy[upper]))
    return concordant / np.sqrt(tx * ty) if tx and ty else float("nan")


def _style_warning(ranking: Ranking) -> list[str]:
    style = ranking.style
    if style is None:
        return []
    out: list[str] = []
    for k in significant_features(style):
        name, coef, low, high = (
            style.features[k],
            style.coef[k],
            style.coef_low[k],
            style.coef_high[k],
        )
        tau = _kendall(ranking.bt.rating, style.rating)
        direction = "more" if coef > 0 else "less"
        out.append(
            f"style effect: the judges favour answers with {direction} {name} "
            f"(coefficient {coef:+.2f}, 95% interval {low:+.2f} to {high:+.2f} log-odds "
            f"per rms unit); the raw Bradley-Terry order may reward {name} rather than "
            f"quality, so rank, rank_low and rank_high follow the style-controlled ratings "
            f"(bt_style; the raw order, Kendall tau {tau:.2f} to it, is in bt and bt_rank)"
        )
    return out


def _position_warning(ranking: Ranking) -> list[str]:
    """Per reviewer, over the battles it judged in both orders (so the models' strengths
    cancel): the share of decisive verdicts for the answer shown first."""
    rs = ranking.reviews
    c, r, n = rs.n_models, rs.n_reviewers, rs.n_battles
    if n == 0:
        return []

    def keys(
        part: slice, first: NDArray[np.integer[Any]], second: NDArray[np.integer[Any]]
    ) -> IntArray:
        """(question, first-shown model, second-shown model, reviewer) as one number."""
        key: IntArray = rs.question[part].astype(np.int64) * c + first[part]
        key *= c
        key += second[part]
        key *= r
        key += rs.reviewer[part]
        return key

    # Every review's key, sorted; then, a slice at a time, whether its mirror is there.
    known = np.empty(n, dtype=np.int64)
    for start in range(0, n, _SLICE):
        known[start : start + _SLICE] = keys(slice(start, start + _SLICE), rs.model_a, rs.model_b)
    known.sort()
    decisive, first = np.zeros(r), np.zeros(r)
    for start in range(0, n, _SLICE):
        part = slice(start, start + _SLICE)
        mirrored = keys(part, rs.model_b, rs.model_a)
        at = np.minimum(np.searchsorted(known, mirrored), n - 1)
        score, reviewer = rs.score[part], rs.reviewer[part]
        both = (known[at] == mirrored) & (score != 0)
        decisive += np.bincount(reviewer[both], minlength=r)
        first += np.bincount(reviewer[both & (score == -1)], minlength=r)
    del known
    out: list[str] = []
    for k, name in enumerate(rs.reviewers):
        if decisive[k] < 10:
            continue
        share = first[k] / decisive[k]
        error = 0.5 / np.sqrt(decisive[k])
        if abs(share - 0.5) >= POSITION_MIN and abs(share - 0.5) > 3 * error:
            side = "first" if share > 0.5 else "second"
            out.append(
                f"position bias: {name} favours the answer shown {side} ({share:.2f} of its "
                f"decisive verdicts on battles it judged in both orders go to the first, n "
                f"{decisive[k]:.0f}); where a battle is judged in one order only, it moves "
                "the ratings"
            )
    return out


def reviewer_agreement(ranking: Ranking) -> tuple[FloatArray, FloatArray] | None:
    """(agreement, common): per pair of reviewers, the share of the battles both judged
    with the same verdict and how many there were (None: too many to tabulate)."""
    rs = ranking.reviews
    r, c = rs.n_reviewers, rs.n_models
    if r < 2 or rs.n_battles == 0:
        return None
    # The distinct battles (question, A, B), sorted; each review's row found by search,
    # a slice at a time (no inverse of 8 bytes a review beside the keys).
    key = (rs.question.astype(np.int64) * c + rs.model_a) * c
    key += rs.model_b
    key.sort()
    unique = key[np.concatenate([[True], key[1:] != key[:-1]])]
    del key
    if unique.shape[0] * r > _AGREEMENT_CELLS:
        return None
    table = np.full((unique.shape[0], r), np.nan)
    for start in range(0, rs.n_battles, _SLICE):
        part = slice(start, start + _SLICE)
        battle = (rs.question[part].astype(np.int64) * c + rs.model_a[part]) * c
        battle += rs.model_b[part]
        table[np.searchsorted(unique, battle), rs.reviewer[part]] = rs.score[part]
    seen = ~np.isnan(table)
    common = seen.T.astype(np.float64) @ seen.astype(np.float64)
    same = np.zeros((r, r))
    for v in (-1.0, 0.0, 1.0):
        hit = (table == v).astype(np.float64)
        same += hit.T @ hit
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement: FloatArray = np.where(common > 0, same / np.where(common > 0, common, 1), np.nan)
    return agreement, common


def reviewer_blocs(agreement: FloatArray) -> list[list[int]]:
    """Groups of reviewers that agree with each other far more than with the rest."""
    r = agreement.shape[0]
    if r < 3:
        return []
    off = agreement.copy()
    np.fill_diagonal(off, np.nan)
    linked = np.zeros((r, r), dtype=bool)
    for i in range(r):
        for j in range(i + 1, r):
            if not np.isfinite(off[i, j]):
                continue
            rest = [k for k in range(r) if k not in (i, j)]
            base_i = np.nanmean(off[i, rest]) if rest else np.nan
            base_j = np.nanmean(off[j, rest]) if rest else np.nan
            if off[i, j] - max(base_i, base_j) >= BLOC_MARGIN:
                linked[i, j] = linked[j, i] = True
    blocs: list[list[int]] = []
    unseen = set(range(r))
    while unseen:
        start = unseen.pop()
        group, stack = {start}, [start]
        while stack:
            node = stack.pop()
            for other in np.flatnonzero(linked[node]).tolist():
                if other not in group:
                    group.add(other)
                    unseen.discard(other)
                    stack.append(other)
        if len(group) < 2 or 2 * len(group) >= r:  # a majority is the rest's view, no bloc
            continue
        members = sorted(group)
        outside = [k for k in range(r) if k not in group]
        within = np.nanmean(off[np.ix_(members, members)])
        block = off[np.ix_(members, outside)]
        across = np.nanmean(block)
        # Each outside reviewer's mean agreement with the group: one that agrees with
        # it nearly as much as its members do makes it part of a wider consensus
        # (two honest judges look like a pair when a real bloc drags the mean down).
        with np.errstate(invalid="ignore"):
            closest = np.nanmax(np.nanmean(block, axis=0)) if outside else np.nan
        if within - across >= BLOC_MARGIN and not within - closest < BLOC_MARGIN / 2:
            blocs.append(members)
    return blocs


def _bloc_warning(ranking: Ranking) -> list[str]:
    found = reviewer_agreement(ranking)
    if found is None:
        return []
    agreement = found[0]
    names = ranking.reviews.reviewers
    weights = ranking.peerrank.weights
    r = len(names)
    off = agreement.copy()
    np.fill_diagonal(off, np.nan)
    out: list[str] = []
    for members in reviewer_blocs(agreement):
        outside = [k for k in range(r) if k not in members]
        within = float(np.nanmean(off[np.ix_(members, members)]))
        across = float(np.nanmean(off[np.ix_(members, outside)]))
        share = float(weights[members].sum() / weights.sum()) if weights.sum() > 0 else 0.0
        fair = len(members) / r
        weighting = ranking.weighting
        outsized = share > fair + 1e-9
        line = (
            f"reviewer bloc: {', '.join(names[k] for k in members)} agree with each other on "
            f"{within:.2f} of the battles they share and with the other reviewers on "
            f"{across:.2f}; they hold {share:.2f} of the {weighting} weight "
            f"({len(members)} of {r} reviewers)"
        )
        if outsized:
            line += ": an outsized share, so their shared view steers the ratings"
        out.append(line)
    return out


def bias_warnings(ranking: Ranking) -> list[str]:
    """The style, position and bloc lines for `ranking` (none when nothing fires)."""
    with warnings.catch_warnings():
        # Reviewers who share no battle have no agreement (NaN): a mean over none of
        # them is NaN, which the checks read as "no evidence", not a problem to report.
        warnings.simplefilter("ignore", RuntimeWarning)
        blocs = _bloc_warning(ranking)
    return _style_warning(ranking) + _position_warning(ranking) + blocs
