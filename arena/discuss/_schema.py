"""The `discussions` log table: one row per initial review and turn, plus the final verdict."""

from __future__ import annotations

import pyarrow as pa

from arena.store import register_table
from arena.store._schema import COMMON_CALL_FIELDS

__all__ = ["DISCUSSION_REVIEWER", "STATE_FILE", "TABLE", "TABLE_SCHEMA"]

TABLE = "discussions"
# Written in the run directory by each discussion run: which discussions count
# (their context) and how their verdicts enter the ranking (outcome, weight).
STATE_FILE = "discussion.json"
# The reviewer of the reviews that `outcome: add` adds; the parentheses keep it
# apart from model names. It does not compete, so PeerRank gives it the mean
# weight of the reviewers that do.
DISCUSSION_REVIEWER = "(discussion)"

# Row kinds: "initial" (a discussant's independent review; copied from the
# reviews table when it is there, `review_id` then names it), "turn" (one turn
# of the discussion) and "final" (the verdict; not a call, its call columns
# are null). `attempt` is 2 for the one re-ask after an unreadable preference.
TABLE_SCHEMA = pa.schema(
    [
        *COMMON_CALL_FIELDS,
        pa.field("discussion_id", pa.string()),
        pa.field("battle_id", pa.string()),
        pa.field("context", pa.string()),  # hash of everything the prompts depend on
        pa.field("kind", pa.string()),  # "initial" | "turn" | "final"
        pa.field("turn", pa.int64()),  # 0 for initial reviews; final: turns taken
        pa.field("attempt", pa.int64()),
        pa.field("speaker", pa.string()),  # null on the final row
        pa.field("leader", pa.string()),
        pa.field("follower", pa.string()),
        pa.field("question_id", pa.string()),
        pa.field("model_a", pa.string()),
        pa.field("model_b", pa.string()),
        pa.field("answer_a_id", pa.string()),
        pa.field("answer_b_id", pa.string()),
        pa.field("trigger", pa.string()),  # the triggers that selected the battle, comma-separated
        pa.field("text", pa.string()),  # raw reply; null when failed
        pa.field("preference", pa.string()),  # "A" | "B" | "tie" | "invalid" | null
        pa.field("review_id", pa.string()),  # initial review copied from the reviews table
        pa.field("verdict", pa.string()),  # final: the agreed verdict; null when unresolved
        pa.field("outcome", pa.string()),  # final: "agreed" | "unresolved"
        pa.field("reason", pa.string()),  # final: why it ended unresolved
    ]
)

register_table(TABLE, TABLE_SCHEMA)
