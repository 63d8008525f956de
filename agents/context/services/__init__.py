from agents.context.services.agents import agent_create, agent_delete, agent_update
from agents.context.services.checkpoints import checkpoint_create, checkpoint_restore
from agents.context.services.context import context_build
from agents.context.services.messages import message_append
from agents.context.services.summaries import summary_request, summary_write

__all__ = [
    "agent_create",
    "agent_delete",
    "agent_update",
    "checkpoint_create",
    "checkpoint_restore",
    "context_build",
    "message_append",
    "summary_request",
    "summary_write",
]
