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
    """The reviewers whose own battles are the only evidence for some model (by name)."""
    own_of = rs.reviewer_as_contestant
    if rs.n_battles == 0 or not bool((own_of >= 0).any()):
        return []
    reviewer = rs.reviewer.astype(np.int64)
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    own = own_of[reviewer]
    mine = (own >= 0) & ((own == a) | (own == b))
    if not bool(mine.any()):
        return []
    c = rs.n_models
    battles = np.bincount(a, minlength=c) + np.bincount(b, minlength=c)
    trusted = np.bincount(a[~mine], minlength=c) + np.bincount(b[~mine], minlength=c)
    orphan = (battles > 0) & (trusted == 0)
    if not bool(orphan.any()):
        return []
    involved = mine & (orphan[a] | orphan[b])
    found: list[SelfJudged] = []
    for code in np.unique(reviewer[involved]).tolist():
        rows = involved & (reviewer == code)
        models = np.unique(np.concatenate([a[rows], b[rows]]))
        names = tuple(rs.contestants[m] for m in models.tolist() if orphan[m])
        count = int(np.count_nonzero(mine & (reviewer == code)))
        found.append(SelfJudged(rs.reviewers[code], count, names))
    return found


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
