from agents.context.services.agents import agent_create, agent_delete, agent_update
from agents.context.services.checkpoints import checkpoint_create, checkpoint_restore
from agents.context.services.context import context_build
from agents.context.services.messages import ChatLine, conversation_replace, message_append
from agents.context.services.summaries import summary_request, summary_write

__all__ = [
    "ChatLine",
    "agent_create",
    "agent_delete",
    "agent_update",
    "checkpoint_create",
    "checkpoint_restore",
    "context_build",
    "conversation_replace",
    "message_append",
    "summary_request",
    "summary_write",
]
