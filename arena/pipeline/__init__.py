"""The plan of a tournament and its all-pairs planner of answers and reviews.

`_plan`: the plan (`build_plan`, content-derived ids, reviews held as columns).
`_allpairs`: `AllPairsPlanner` (every answer, then each review as soon as
both of its answers are logged) and the `ReviewSelector` protocol a stage
uses to choose the reviews instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes

if TYPE_CHECKING:
    from arena.pipeline._allpairs import AllPairsPlanner, ReviewSelector, Round, Selection, base_row
    from arena.pipeline._plan import (
        AnswerCall,
        Plan,
        ReviewCall,
        ReviewCalls,
        ReviewIdSet,
        answer_id,
        build_plan,
        load_done,
        question_context,
        review_context,
        review_id,
        settled_reviews,
    )
    from arena.session import make_providers

# Each public name -> its module, imported on first use (PEP 562): `arena plan` and
# `arena status` build the plan (`_plan`) without the planner and the run machinery.
_LAZY: dict[str, str] = {
    "AllPairsPlanner": "arena.pipeline._allpairs",
    "ReviewSelector": "arena.pipeline._allpairs",
    "Round": "arena.pipeline._allpairs",
    "Selection": "arena.pipeline._allpairs",
    "base_row": "arena.pipeline._allpairs",
    "AnswerCall": "arena.pipeline._plan",
    "Plan": "arena.pipeline._plan",
    "ReviewCall": "arena.pipeline._plan",
    "ReviewCalls": "arena.pipeline._plan",
    "ReviewIdSet": "arena.pipeline._plan",
    "answer_id": "arena.pipeline._plan",
    "build_plan": "arena.pipeline._plan",
    "load_done": "arena.pipeline._plan",
    "question_context": "arena.pipeline._plan",
    "review_context": "arena.pipeline._plan",
    "review_id": "arena.pipeline._plan",
    "settled_reviews": "arena.pipeline._plan",
    "make_providers": "arena.session",
}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "AllPairsPlanner",
    "AnswerCall",
    "Plan",
    "ReviewCall",
    "ReviewCalls",
    "ReviewIdSet",
    "ReviewSelector",
    "Round",
    "Selection",
    "answer_id",
    "base_row",
    "build_plan",
    "load_done",
    "make_providers",
    "review_context",
    "review_id",
    "question_context",
    "settled_reviews",
]
