"""The plan of a tournament and its all-pairs planner of answers and reviews.

`_plan`: the plan (`build_plan`, content-derived ids, reviews held as columns).
`_allpairs`: `AllPairsPlanner` (every answer, then each review as soon as
both of its answers are logged) and the `ReviewSelector` protocol a stage
uses to choose the reviews instead.
"""

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
