"""Reads of agents. Each space keeps its own: an agent of another space is not found, as one
that does not exist."""

from django.db.models import QuerySet

from agents.context.models import Agent
from memsite.errors import NotFound
from memsite.spaces.models import Space


def agent_missing(agent_id: object) -> NotFound:
    """The one refusal for an agent that is not in the space asked about, there or not."""
    return NotFound(f"No agent with id {agent_id!r}.")


def agent_get(*, space: Space, agent_id: int) -> Agent:
    try:
        return Agent.objects.get(pk=agent_id, space=space)
    except (Agent.DoesNotExist, ValueError, TypeError):
        raise agent_missing(agent_id) from None


def agent_fresh(*, agent: Agent) -> Agent:
    """The agent's row as it is now: a copy read earlier may predate appends or new settings."""
    try:
        return Agent.objects.get(pk=agent.pk)
    except Agent.DoesNotExist:
        raise agent_missing(agent.pk) from None


def agent_named(*, space: Space, name: str) -> Agent | None:
    return Agent.objects.filter(space=space, name=name).first()


def agent_list(*, space: Space) -> QuerySet[Agent]:
    """The space's agents by name, with only the columns the lists show."""
    return (
        Agent.objects.filter(space=space)
        .order_by("name")
        .only("name", "model", "strategy", "message_count", "conversation_tokens", "updated_at")
    )
