"""The `discussions` log table: one row per initial review and turn, plus the final verdict."""

from __future__ import annotations

import polars as pl

from arena.store import Column, TableSchema, register_table
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
TABLE_SCHEMA = TableSchema(
    [
        *COMMON_CALL_FIELDS,
        Column("discussion_id", pl.String),
        Column("battle_id", pl.String),
        Column("context", pl.String),  # hash of everything the prompts depend on
        Column("kind", pl.String),  # "initial" | "turn" | "final"
        Column("turn", pl.Int64),  # 0 for initial reviews; final: turns taken
        Column("attempt", pl.Int64),
        Column("speaker", pl.String),  # null on the final row
        Column("leader", pl.String),
        Column("follower", pl.String),
        Column("question_id", pl.String),
        Column("model_a", pl.String),
        Column("model_b", pl.String),
        Column("answer_a_id", pl.String),
        Column("answer_b_id", pl.String),
        Column("trigger", pl.String),  # the triggers that selected the battle, comma-separated
        Column("text", pl.String),  # raw reply; null when failed
        Column("preference", pl.String),  # "A" | "B" | "tie" | "invalid" | null
        Column("review_id", pl.String),  # initial review copied from the reviews table
        Column("verdict", pl.String),  # final: the agreed verdict; null when unresolved
        Column("outcome", pl.String),  # final: "agreed" | "unresolved"
        Column("reason", pl.String),  # final: why it ended unresolved
    ]
)

register_table(TABLE, TABLE_SCHEMA)
