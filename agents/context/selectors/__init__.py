from agents.context.selectors.agents import (
    DeletionEffect,
    agent_deletion,
    agent_fresh,
    agent_get,
    agent_list,
    agent_missing,
    agent_named,
)
from agents.context.selectors.checkpoints import checkpoint_get
from agents.context.selectors.messages import (
    HistoryPoint,
    ScoredMessage,
    StoredMessage,
    message_history,
    message_history_point,
    message_list,
    message_pinned,
    message_rows,
    message_scores,
    message_turn_start,
)
from agents.context.selectors.pages import (
    MessagePage,
    checkpoint_list,
    message_page,
)
from agents.context.selectors.summaries import StoredSummary, summary_latest, summary_list

__all__ = [
    "DeletionEffect",
    "HistoryPoint",
    "MessagePage",
    "ScoredMessage",
    "StoredMessage",
    "StoredSummary",
    "agent_deletion",
    "agent_fresh",
    "agent_get",
    "agent_list",
    "agent_missing",
    "agent_named",
    "checkpoint_get",
    "checkpoint_list",
    "message_history",
    "message_history_point",
    "message_list",
    "message_page",
    "message_pinned",
    "message_rows",
    "message_scores",
    "message_turn_start",
    "summary_latest",
    "summary_list",
]
