from agents.services.agents import agent_create, agent_update
from agents.services.brains_json import ImportReport, brain_export, brain_import
from agents.services.chat import ChatExchange, ChatFailed, chat_send
from agents.services.checkpoints import checkpoint_create, checkpoint_restore
from agents.services.context import context_build
from agents.services.graphs import (
    graph_create,
    graph_memorize,
    graph_recall,
    graph_snapshot_import,
    graph_work,
    graphs_sweep_stale,
)
from agents.services.messages import message_append
from agents.services.summaries import summary_request, summary_write
from agents.services.ticks import (
    tick_request,
    tick_run,
    ticking_pause,
    ticking_start,
    ticks_start_due,
    ticks_sweep_stale,
)

__all__ = [
    "ChatExchange",
    "ChatFailed",
    "ImportReport",
    "agent_create",
    "agent_update",
    "brain_export",
    "brain_import",
    "chat_send",
    "checkpoint_create",
    "checkpoint_restore",
    "context_build",
    "graph_create",
    "graph_memorize",
    "graph_recall",
    "graph_snapshot_import",
    "graph_work",
    "graphs_sweep_stale",
    "message_append",
    "summary_request",
    "summary_write",
    "tick_request",
    "tick_run",
    "ticking_pause",
    "ticking_start",
    "ticks_start_due",
    "ticks_sweep_stale",
]
