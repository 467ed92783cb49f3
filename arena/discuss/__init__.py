"""PeerDiscussion: two reviewers discuss disputed battles to a shared verdict.

See docs/discussion.md for the method (the PRD paper's protocol by default, and
arena's variants as options), the YAML section, the `arena discuss` command and
the log table.
Importing this package registers the `discussions` log table with the store;
its other names load on first use, from their modules (the stage itself is
`arena.discuss._stage`, which `arena.stages` imports without the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.discuss._schema import DISCUSSION_REVIEWER, STATE_FILE, TABLE, TABLE_SCHEMA
from arena.lazy import lazy_attributes as _lazy_attributes

if TYPE_CHECKING:
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
    from arena.discuss._outcome import Outcome, agreed_verdicts, apply_discussions
    from arena.discuss._planner import (
        DiscussionPlanner,
        DiscussionSteps,
        discussion_id,
        discussion_planner,
    )
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
    from arena.discuss._stage import DISCUSSION_STAGE, DiscussionBound, discussion_bound
    from arena.discuss._standalone import discuss_existing, with_discussion
    from arena.discuss._state import DiscussionState, discussion_context, read_state, write_state
    from arena.discuss._stats import DiscussionStats, ModelStance, discussion_stats
    from arena.discuss._triggers import TRIGGERS, battle_triggers, mirror_verdict, select_battles

# Each public name -> its module, imported on first use (PEP 562): a command that
# needs the stage's hooks (arena.stages) does not load the whole package.
_LAZY: dict[str, str] = {
    "DiscussionConfig": "arena.config",
    "accuracy_line": "arena.discuss._accuracy",
    "discussion_accuracy": "arena.discuss._accuracy",
    "human_labels": "arena.discuss._accuracy",
    "DiscussionTable": "arena.discuss._board",
    "bias_line": "arena.discuss._board",
    "discussion_block": "arena.discuss._board",
    "discussion_footer": "arena.discuss._board",
    "discussion_tables": "arena.discuss._board",
    "choose_leader": "arena.discuss._choose",
    "discussant_pairs": "arena.discuss._choose",
    "ranked_reviewers": "arena.discuss._choose",
    "top2": "arena.discuss._choose",
    "discussion_counts": "arena.discuss._counts",
    "DISCUSSION_STAGE": "arena.discuss._stage",
    "DiscussionBound": "arena.discuss._stage",
    "discussion_bound": "arena.discuss._stage",
    "Outcome": "arena.discuss._outcome",
    "agreed_verdicts": "arena.discuss._outcome",
    "apply_discussions": "arena.discuss._outcome",
    "DEFAULT_ROLE_TEMPLATE": "arena.discuss._prompt",
    "DEFAULT_TEMPLATE": "arena.discuss._prompt",
    "Templates": "arena.discuss._prompt",
    "load_templates": "arena.discuss._prompt",
    "render_messages": "arena.discuss._prompt",
    "render_opening": "arena.discuss._prompt",
    "render_role": "arena.discuss._prompt",
    "Battle": "arena.discuss._protocol",
    "Discussant": "arena.discuss._protocol",
    "DiscussionResult": "arena.discuss._protocol",
    "DiscussionSpec": "arena.discuss._protocol",
    "LoggedReview": "arena.discuss._protocol",
    "Settings": "arena.discuss._protocol",
    "battle_id": "arena.discuss._protocol",
    "discussion_steps": "arena.discuss._protocol",
    "logged_calls": "arena.discuss._protocol",
    "row_id": "arena.discuss._protocol",
    "DiscussionReport": "arena.discuss._rundir",
    "discussion_report": "arena.discuss._rundir",
    "read_discussions": "arena.discuss._rundir",
    "DiscussionPlanner": "arena.discuss._planner",
    "DiscussionSteps": "arena.discuss._planner",
    "discussion_id": "arena.discuss._planner",
    "discussion_planner": "arena.discuss._planner",
    "discuss_existing": "arena.discuss._standalone",
    "with_discussion": "arena.discuss._standalone",
    "DiscussionState": "arena.discuss._state",
    "discussion_context": "arena.discuss._state",
    "read_state": "arena.discuss._state",
    "write_state": "arena.discuss._state",
    "DiscussionStats": "arena.discuss._stats",
    "ModelStance": "arena.discuss._stats",
    "discussion_stats": "arena.discuss._stats",
    "TRIGGERS": "arena.discuss._triggers",
    "battle_triggers": "arena.discuss._triggers",
    "mirror_verdict": "arena.discuss._triggers",
    "select_battles": "arena.discuss._triggers",
}


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)


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
    "DiscussionBound",
    "DiscussionReport",
    "DiscussionResult",
    "DiscussionSpec",
    "DiscussionPlanner",
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
    "discussion_planner",
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
