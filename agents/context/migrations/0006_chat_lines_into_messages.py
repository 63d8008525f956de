"""A chat line is a message of its agent's conversation: the brains' chat records move in, each
where its time puts it among the messages there (docs/memory-json.md). Those moved up keep their
order, references follow them, and the agent's summaries go. One way: going back leaves the lines
in the conversation, where nothing marks them as moved; run again, it finds no chat record."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import migrations

from agents.context.logic.wire import wire_message, wire_tokens
from memsite.llm.tokens import counter_for_model

RESULT_ROLES = ("tool", "function")


@dataclass
class _Line:
    record_id: int
    role: str
    content: str
    data: dict
    created_at: datetime


def _units(messages: list[Any]) -> list[list[Any]]:
    """Each message with the tool results that answer it."""
    units: list[list[Any]] = []
    for message in messages:
        if message.role in RESULT_ROLES and units:
            units[-1].append(message)
        else:
            units.append([message])
    return units


def merged(units: list[list[Any]], lines: list[_Line], *, waiting: bool) -> list[Any]:
    """The messages and lines in the order of their times, the messages first among equals;
    with `waiting`, the last unit (its calls wait for results) stays last."""
    held = units[-1:] if waiting else []
    units = units[:-1] if waiting else units
    order: list[Any] = []
    unit_at = line_at = 0
    while unit_at < len(units) or line_at < len(lines):
        take_line = unit_at == len(units) or (
            line_at < len(lines) and lines[line_at].created_at < units[unit_at][0].created_at
        )
        if take_line:
            order.append(lines[line_at])
            line_at += 1
        else:
            order.extend(units[unit_at])
            unit_at += 1
    return order + [message for unit in held for message in unit]


def _lines(apps, brain_id: int) -> list[_Line]:
    records = apps.get_model("brains", "Record").objects.filter(brain_id=brain_id, kind="chat").order_by("seq")
    return [
        _Line(
            record_id=record.pk,
            role="assistant" if isinstance(record.data, dict) and record.data.get("role") == "assistant" else "user",
            content=record.text,
            # The entry as memory.json had it, which an export writes back; a bare string is its text.
            data=record.data if isinstance(record.data, dict) else {},
            created_at=record.created_at,
        )
        for record in records
        if record.text  # a message needs text; an empty line says nothing
    ]


def _place(order: list[Any]) -> dict[int, int]:
    """Each item's new position and history offset; the new positions of the messages already
    there, by their old."""
    moved = {}
    offset = 0
    for position, item in enumerate(order, 1):
        if not isinstance(item, _Line):
            moved[item.position] = position
        item.new_position, item.new_offset = position, offset
        offset += 0 if getattr(item, "pinned", False) else item.token_count
    return moved


def _renumber(Message, order: list[Any], moved: dict[int, int]) -> None:
    """The messages already there, moved up past the lines before them: the highest first, so
    that no two ever share a position (their order stays)."""
    messages = [item for item in order if not isinstance(item, _Line)]
    for message in sorted(messages, key=lambda item: -item.position):
        references = sorted(moved.get(reference, reference) for reference in message.references)
        changed = {"position": message.new_position, "history_offset": message.new_offset, "references": references}
        if any(getattr(message, name) != value for name, value in changed.items()):
            Message.objects.filter(pk=message.pk).update(**changed)


def _move(apps, brain_id: int) -> None:
    Message = apps.get_model("context", "Message")
    agent = apps.get_model("context", "Agent").objects.get(pk=brain_id)
    lines = _lines(apps, brain_id)
    counter = counter_for_model(agent.model)
    for line in lines:
        line.token_count = wire_tokens(counter, wire_message(role=line.role, content=line.content))
    messages = list(Message.objects.filter(agent=agent).order_by("position"))
    order = merged(_units(messages), lines, waiting=bool(agent.pending_tool_calls))
    moved = _place(order)
    _renumber(Message, order, moved)
    if any(old != new for old, new in moved.items()):
        apps.get_model("context", "Summary").objects.filter(agent=agent).delete()
    calls = apps.get_model("llm", "LLMCall").objects
    record_type, message_type = _served_types(apps)
    for line in lines:
        message = Message.objects.create(
            agent=agent,
            position=line.new_position,
            role=line.role,
            content=line.content,
            data=line.data,
            token_count=line.token_count,
            token_encoding=counter.encoding.name,
            tokens_approximate=counter.approximate,
            history_offset=line.new_offset,
            created_at=line.created_at,
        )
        # The ledger's calls that served the line serve its message.
        calls.filter(served_type=record_type, served_id=line.record_id).update(
            served_type=message_type, served_id=message.pk
        )
    added = sum(line.token_count for line in lines)
    agent.message_count = len(order)
    agent.conversation_tokens += added
    agent.history_tokens += added
    agent.save(update_fields=["message_count", "conversation_tokens", "history_tokens"])


def _served_types(apps) -> tuple[Any, Any]:
    """The content types of a chat record and of a message, as the ledger names what it served."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    record, _ = ContentType.objects.get_or_create(app_label="brains", model="record")
    message, _ = ContentType.objects.get_or_create(app_label="context", model="message")
    return record, message


def move_chat_lines(apps, schema_editor) -> None:
    Record = apps.get_model("brains", "Record")
    Brain = apps.get_model("brains", "Brain")
    brain_ids = sorted(set(Record.objects.filter(kind="chat").values_list("brain_id", flat=True)))
    for brain_id in brain_ids:
        _move(apps, brain_id)
        Record.objects.filter(brain_id=brain_id, kind="chat").delete()
        brain = Brain.objects.get(pk=brain_id)
        brain.record_seqs.pop("chat", None)
        brain.record_floors.pop("chat", None)
        brain.save(update_fields=["record_seqs", "record_floors"])


class Migration(migrations.Migration):
    dependencies = [
        ("context", "0005_message_data"),
        ("brains", "0002_tick_tokens"),
        ("llm", "0006_acted_as"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(move_chat_lines, migrations.RunPython.noop),
    ]
