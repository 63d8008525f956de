from agents.context.selectors.agents import agent_get
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
    agent_list,
    checkpoint_list,
    message_page,
)
from agents.context.selectors.summaries import StoredSummary, summary_latest, summary_list

__all__ = [
    "HistoryPoint",
    "MessagePage",
    "ScoredMessage",
    "StoredMessage",
    "StoredSummary",
    "agent_get",
    "agent_list",
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
