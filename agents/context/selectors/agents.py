"""Reads of agents. Each space keeps its own: an agent of another space is not found, as one
that does not exist."""

from dataclasses import dataclass

from django.db import models
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


@dataclass(frozen=True)
class DeletionEffect:
    model: str  # app_label.model_name
    count: int
    deleted: bool  # False: the rows stay, their link to what is deleted cleared


def agent_deletion(*, agent: Agent) -> list[DeletionEffect]:
    """What deleting the agent takes with it and what it unlinks, model by model, by following
    every relation that cascades: counted, never read, so a large brain costs a count."""
    effects: list[DeletionEffect] = []
    seen: set[type[models.Model]] = {Agent}
    pending: list[tuple[type[models.Model], QuerySet]] = [(Agent, Agent.objects.filter(pk=agent.pk))]
    while pending:
        model, rows = pending.pop(0)
        for relation in model._meta.related_objects:
            related = relation.related_model
            if isinstance(related, str) or relation.many_to_many or related in seen:
                continue  # a model reached twice (a synapse by its brain and its neurons) is counted once
            children = related._base_manager.filter(**{f"{relation.field.name}__in": rows})
            if relation.on_delete is models.CASCADE:
                seen.add(related)
                pending.append((related, children))
                effects.append(DeletionEffect(related._meta.label_lower, children.count(), deleted=True))
            elif relation.on_delete is models.SET_NULL:
                effects.append(DeletionEffect(related._meta.label_lower, children.count(), deleted=False))
    return [effect for effect in effects if effect.count]
