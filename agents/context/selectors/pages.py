"""Reads of the dashboard's agent pages: lists that show a page at a time and leave out the
columns they do not show (instructions, context variables, checkpoint documents)."""

from dataclasses import dataclass

from django.db.models import QuerySet

from agents.context.models import Agent, Checkpoint, Message


@dataclass(frozen=True)
class MessagePage:
    messages: list[Message]  # newest first
    older_before: int | None  # the `before` of the next, older page, if there is one


def message_page(*, agent: Agent, before: int | None = None, size: int) -> MessagePage:
    """Up to `size` of the agent's messages before position `before` (default: the newest),
    newest first: one range scan of the (agent, position) index, however long the conversation."""
    messages = Message.objects.filter(agent=agent)
    if before is not None:
        messages = messages.filter(position__lt=before)
    rows = list(messages.order_by("-position")[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return MessagePage(messages=rows, older_before=rows[-1].position if more else None)


def checkpoint_list(*, agent: Agent) -> QuerySet[Checkpoint]:
    """The agent's checkpoints, newest first, without their documents."""
    return Checkpoint.objects.filter(agent=agent).defer("document").order_by("-version")
