from agents.services.agents import agent_create, agent_update
from agents.services.checkpoints import checkpoint_create, checkpoint_restore
from agents.services.context import context_build
from agents.services.messages import message_append
from agents.services.summaries import summary_request, summary_write

__all__ = [
    "agent_create",
    "agent_update",
    "checkpoint_create",
    "checkpoint_restore",
    "context_build",
    "message_append",
    "summary_request",
    "summary_write",
]
