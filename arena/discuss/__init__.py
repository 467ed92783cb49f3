"""PeerDiscussion: two reviewers discuss disputed battles to a shared verdict.

See docs/discussion.md for the method (the PRD paper's protocol by default, and
arena's variants as options), the YAML section, the `arena discuss` command and
the log table.
Importing this package registers the discussion stage of `arena run`.
"""

from arena.config import DiscussionConfig
from arena.discuss._accuracy import accuracy_line, discussion_accuracy, human_labels
from arena.discuss._board import (
    DiscussionTable,
    bias_line,
    discussion_block,
    discussion_footer,
    discussion_tables,
)
from arena.discuss._choose import choose_leader, discussant_pairs, ranked_reviewers, top2
from arena.discuss._counts import discussion_counts
from arena.discuss._hooks import DISCUSSION_STAGE, DiscussionHooks, discussion_bound
from arena.discuss._outcome import Outcome, agreed_verdicts, apply_discussions
from arena.discuss._prompt import (
    DEFAULT_ROLE_TEMPLATE,
    DEFAULT_TEMPLATE,
    Templates,
    load_templates,
    render_messages,
    render_opening,
    render_role,
)
from arena.discuss._protocol import (
    Battle,
    Discussant,
    DiscussionResult,
    DiscussionSpec,
    LoggedReview,
    Settings,
    battle_id,
    discussion_steps,
    logged_calls,
    row_id,
)
from arena.discuss._rundir import (
    DiscussionReport,
    discussion_report,
    read_discussions,
)
from arena.discuss._schema import DISCUSSION_REVIEWER, STATE_FILE, TABLE, TABLE_SCHEMA
from arena.discuss._stage import DiscussionStage, DiscussionSteps, discussion_id, discussion_stage
from arena.discuss._standalone import discuss_existing, with_discussion
from arena.discuss._state import DiscussionState, discussion_context, read_state, write_state
from arena.discuss._stats import DiscussionStats, ModelStance, discussion_stats
from arena.discuss._triggers import TRIGGERS, battle_triggers, mirror_verdict, select_battles

__all__ = [
    "DEFAULT_ROLE_TEMPLATE",
    "DEFAULT_TEMPLATE",
    "DISCUSSION_REVIEWER",
    "DISCUSSION_STAGE",
    "STATE_FILE",
    "TABLE",
    "TABLE_SCHEMA",
    "TRIGGERS",
    "Battle",
    "Discussant",
    "DiscussionConfig",
    "DiscussionHooks",
    "DiscussionReport",
    "DiscussionResult",
    "DiscussionSpec",
    "DiscussionStage",
    "DiscussionSteps",
    "DiscussionState",
    "DiscussionStats",
    "DiscussionTable",
    "LoggedReview",
    "ModelStance",
    "Outcome",
    "Settings",
    "Templates",
    "accuracy_line",
    "agreed_verdicts",
    "apply_discussions",
    "battle_id",
    "bias_line",
    "battle_triggers",
    "choose_leader",
    "discuss_existing",
    "discussant_pairs",
    "discussion_accuracy",
    "discussion_block",
    "discussion_bound",
    "discussion_context",
    "discussion_counts",
    "discussion_footer",
    "discussion_id",
    "discussion_report",
    "discussion_stage",
    "discussion_stats",
    "discussion_steps",
    "discussion_tables",
    "human_labels",
    "load_templates",
    "logged_calls",
    "mirror_verdict",
    "read_discussions",
    "ranked_reviewers",
    "read_state",
    "render_messages",
    "render_opening",
    "render_role",
    "row_id",
    "select_battles",
    "top2",
    "with_discussion",
    "write_state",
]
