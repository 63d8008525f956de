"""Reads of agents."""

from agents.context.models import Agent
from memsite.errors import NotFound


def agent_get(*, agent_id: int) -> Agent:
    try:
        return Agent.objects.get(pk=agent_id)
    except (Agent.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"No agent with id {agent_id!r}.") from None
