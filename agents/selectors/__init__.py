from agents.selectors.agents import agent_get
from agents.selectors.checkpoints import checkpoint_get
from agents.selectors.messages import (
    HistoryPoint,
    StoredMessage,
    message_history,
    message_history_point,
    message_list,
    message_pinned,
    message_turn_start,
)
from agents.selectors.pages import MessagePage, agent_list, checkpoint_list, message_page
from agents.selectors.summaries import StoredSummary, summary_latest, summary_list

__all__ = [
    "HistoryPoint",
    "StoredMessage",
    "agent_get",
    "checkpoint_get",
    "message_history",
    "message_history_point",
    "message_list",
    "message_pinned",
    "message_turn_start",
    "MessagePage",
    "agent_list",
    "checkpoint_list",
    "message_page",
    "StoredSummary",
    "summary_latest",
    "summary_list",
]
