from agents.services.agents import agent_create, agent_update
from agents.services.checkpoints import checkpoint_create, checkpoint_restore
from agents.services.messages import message_append

__all__ = [
    "agent_create",
    "agent_update",
    "checkpoint_create",
    "checkpoint_restore",
    "message_append",
]
