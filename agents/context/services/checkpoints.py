"""Checkpoints: an agent's state and whole conversation saved as one versioned JSON document,
and restored exactly, all or nothing. The agent keeps its name and its other checkpoints; its
summaries go, to be written again as assemblies ask for them."""

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from agents.context.models import Agent, Checkpoint, Message, Summary
from agents.context.services.agents import SETTINGS
from memsite.errors import InvalidInput, NotFound

DOCUMENT_FORMAT = 1
# The agent's name is its identity, not its state: a restore keeps it.
AGENT_FIELDS = (
    *(field for field in SETTINGS if field != "name"),
    "message_count",
    "conversation_tokens",
    "history_tokens",
    "pending_tool_calls",
)
MESSAGE_FIELDS = (
    "position",
    "role",
    "content",
    "content_parts",
    "name",
    "refusal",
    "audio",
    "function_call",
    "tool_calls",
    "annotations",
    "tool_call_id",
    "tool_name",
    "sender",
    "pinned",
    "importance",
    "references",
    "token_count",
    "token_encoding",
    "tokens_approximate",
    "history_offset",
    "created_at",
    "data",
)
# Fields added since the first documents were written: a document without them restores them
# empty.
LATER_MESSAGE_FIELDS = ("content_parts", "name", "refusal", "audio", "function_call", "annotations", "data")
ALL_MESSAGE_FIELDS = frozenset(MESSAGE_FIELDS)
EARLIER_MESSAGE_FIELDS = ALL_MESSAGE_FIELDS - frozenset(LATER_MESSAGE_FIELDS)
RESTORE_BATCH = 1_000


def _message_entry(row: tuple) -> dict[str, Any]:
    entry = dict(zip(MESSAGE_FIELDS, row, strict=True))
    entry["created_at"] = entry["created_at"].isoformat()
    return entry


def checkpoint_create(*, agent: Agent) -> Checkpoint:
    with transaction.atomic():
        # The lock keeps appends out while the conversation is read, and numbers versions.
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        rows = Message.objects.filter(agent=agent).order_by("position").values_list(*MESSAGE_FIELDS)
        messages = [_message_entry(row) for row in rows.iterator(chunk_size=RESTORE_BATCH)]
        document = {
            "format": DOCUMENT_FORMAT,
            "agent": {field: getattr(agent, field) for field in AGENT_FIELDS},
            "messages": messages,
        }
        latest = Checkpoint.objects.filter(agent=agent).aggregate(latest=Max("version"))["latest"] or 0
        return Checkpoint.objects.create(
            agent=agent, version=latest + 1, message_count=len(messages), document=document
        )


def _readable(checkpoint: Checkpoint) -> dict:
    document = checkpoint.document
    unreadable = InvalidInput(f"Checkpoint {checkpoint.version} is not a format {DOCUMENT_FORMAT} document.")
    if not isinstance(document, dict) or document.get("format") != DOCUMENT_FORMAT:
        raise unreadable
    state, messages = document.get("agent"), document.get("messages")
    if not isinstance(state, dict) or set(state) != set(AGENT_FIELDS) or not isinstance(messages, list):
        raise unreadable
    if not all(
        isinstance(entry, dict) and EARLIER_MESSAGE_FIELDS <= entry.keys() <= ALL_MESSAGE_FIELDS for entry in messages
    ):
        raise unreadable
    return document


def checkpoint_restore(*, agent: Agent, checkpoint: Checkpoint) -> Agent:
    """Put the agent back as it was when `checkpoint` was made: its settings, counters and
    every message with the token counts and times it had."""
    if checkpoint.agent_id != agent.pk:
        raise NotFound(f"Agent {agent.pk} has no checkpoint {checkpoint.pk}.")
    document = _readable(checkpoint)
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        Message.objects.filter(agent=agent).delete()
        # Summaries describe the messages they read, which may not come back.
        Summary.objects.filter(agent=agent).delete()
        messages = (
            Message(agent=agent, **{**entry, "created_at": datetime.fromisoformat(entry["created_at"])})
            for entry in document["messages"]
        )
        for field, value in document["agent"].items():
            setattr(agent, field, value)
        try:
            with transaction.atomic():
                Message.objects.bulk_create(messages, batch_size=RESTORE_BATCH)
                agent.save(update_fields=[*AGENT_FIELDS, "updated_at"])
        except IntegrityError as error:
            raise InvalidInput(f"Checkpoint {checkpoint.version} cannot be restored: {error}") from None
    return agent
