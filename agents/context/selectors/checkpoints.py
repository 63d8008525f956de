"""Reads of checkpoints."""

from agents.context.models import Agent, Checkpoint
from memsite.errors import NotFound


def checkpoint_get(*, agent: Agent, checkpoint_id: int) -> Checkpoint:
    """One of the agent's checkpoints, document included; another agent's is not found."""
    try:
        return Checkpoint.objects.get(pk=checkpoint_id, agent=agent)
    except (Checkpoint.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"Agent {agent.pk} has no checkpoint {checkpoint_id!r}.") from None
