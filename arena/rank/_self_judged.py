"""Self-judged battles that are the only evidence: kept, and said so.

Reliability weights leave out the reviews a reviewer made of its own battles
(its self-preference is measured, not trusted). Where those reviews are all a
model has (one judge that also competes, as in MT-bench's GPT-4 judgments of
GPT-4, or a model judged only by itself), leaving them out would blank the
model's ratings with no explanation. So: a model whose every counted battle was
judged by a reviewer taking part in it makes the reviewers of those battles
count as judges that do not compete (their own battles kept, like any other
judge's), and each such reviewer is named with the number of self-judged
reviews kept. Its self-preference cannot be measured then: no other judge
rated its answers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from arena.rank._encode import ReviewSet
from arena.rank._reliability import trusted_slices

__all__ = ["SelfJudged", "keep_sole_self_judged", "sole_self_judged"]


@dataclass(frozen=True)
class SelfJudged:
    """A reviewer whose own battles are the only evidence for `models`: they are kept."""

    reviewer: str
    reviews: int  # its self-judged reviews (all kept)
    models: tuple[str, ...]  # the models judged by nobody else

    def note(self) -> str:
        """One line for the JSON `warnings` and the table's notes."""
        models = ", ".join(self.models)
        return (
            f"{self.reviews} self-judged review{'s' if self.reviews != 1 else ''} by "
            f"{self.reviewer} kept: they are the only evidence for {models} (reliability "
            f"weights otherwise leave a judge's own battles out); {self.reviewer}'s "
            "self-preference cannot be measured, as no other judge rated these answers"
        )


def sole_self_judged(rs: ReviewSet) -> list[SelfJudged]:
    """The reviewers whose own battles are the only evidence for some model (by name).

    Two passes over the reviews a slice at a time (no array of 8 bytes a review): the
    battles of each model, all and not judged by a reviewer playing in them; then,
    for the models with only the latter kind, who judged them.
    """
    if rs.n_battles == 0 or not bool((rs.reviewer_as_contestant >= 0).any()):
        return []
    c, r = rs.n_models, rs.n_reviewers
    battles, trusted = np.zeros(c, dtype=np.int64), np.zeros(c, dtype=np.int64)
    own_count = np.zeros(r, dtype=np.int64)  # per reviewer: its own battles
    for part, keep in trusted_slices(rs):
        a, b = rs.model_a[part], rs.model_b[part]
        battles += np.bincount(a, minlength=c) + np.bincount(b, minlength=c)
        trusted += np.bincount(a[keep], minlength=c) + np.bincount(b[keep], minlength=c)
        own_count += np.bincount(rs.reviewer[part][~keep], minlength=r)
    orphan = (battles > 0) & (trusted == 0)
    if not bool(orphan.any()):
        return []
    judged = np.zeros((r, c), dtype=bool)  # reviewer x orphaned model it judged
    for part, keep in trusted_slices(rs):
        a, b = rs.model_a[part], rs.model_b[part]
        involved = ~keep & (orphan[a] | orphan[b])
        who = rs.reviewer[part][involved]
        judged[who, a[involved]] = True
        judged[who, b[involved]] = True
    judged &= orphan[None, :]
    return [
        SelfJudged(
            rs.reviewers[code],
            int(own_count[code]),
            tuple(rs.contestants[m] for m in np.flatnonzero(judged[code]).tolist()),
        )
        for code in np.flatnonzero(judged.any(axis=1)).tolist()
    ]


def keep_sole_self_judged(rs: ReviewSet) -> tuple[ReviewSet, list[SelfJudged]]:
    """`rs` with the reviewers of `sole_self_judged` counted as judges that do not compete
    (their own battles then stay in every rating that leaves own battles out)."""
    found = sole_self_judged(rs)
    if not found:
        return rs, found
    as_contestant = rs.reviewer_as_contestant.copy()
    for item in found:
        as_contestant[rs.reviewers.index(item.reviewer)] = -1
    return dataclasses.replace(rs, reviewer_as_contestant=as_contestant), found
