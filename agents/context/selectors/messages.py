"""Reads of conversations, shaped for assembly: plain rows with only the columns it uses,
found through the indexes on (agent, position) and (agent, history_offset), so the cost of a
read follows what it returns, not how long the conversation is.
Explained in docs/context.md."""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet, Sum, TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from agents.context.models import Agent, Message, Role

PAGE_SIZE = 1_000
STORED_COLUMNS = (
    "position",
    "role",
    "content",
    "content_parts_text",
    "name",
    "refusal",
    "audio_id",
    "function_call_text",
    "tool_calls_text",
    "tool_call_id",
    "importance",
    "references_text",
    "token_count",
    "token_encoding",
)


@dataclass(frozen=True)
class StoredMessage:
    """A message as assembly sends it (`agents.context.logic.wire.wire_message`), with what it chooses by."""

    position: int
    role: str
    content: str
    content_parts: list
    name: str
    refusal: str
    audio_id: str
    function_call: dict
    tool_calls: list
    tool_call_id: str
    pinned: bool
    importance: float
    references: list
    token_count: int
    token_encoding: str


@dataclass(frozen=True)
class ScoredMessage:
    position: int
    role: str
    importance: float
    references: list
    token_count: int


@dataclass(frozen=True)
class HistoryPoint:
    """A message's position and the unpinned tokens before it."""

    position: int
    offset: int


def message_list(*, agent: Agent) -> QuerySet[Message]:
    return Message.objects.filter(agent=agent).order_by("position")


def message_tokens_after(*, agent: Agent, position: int) -> tuple[int, int]:
    """The tokens of the messages after `position`, and of the unpinned among them: one range
    read of the (agent, position) index, as long as what came after."""
    later = Message.objects.filter(agent=agent, position__gt=position).aggregate(
        every=Sum("token_count"), unpinned=Sum("token_count", filter=Q(pinned=False))
    )
    return later["every"] or 0, later["unpinned"] or 0


def message_at(*, agent: Agent, position: int) -> Message | None:
    return Message.objects.filter(agent=agent, position=position).first()


def message_chat_lines(*, agent: Agent, limit: int) -> list[Message]:
    """The newest `limit` chat lines of the conversation, oldest first: its user and assistant
    messages with text, as memory.json's chatHistory keeps them. Read newest first along the
    (agent, position) index, so the cost follows `limit`."""
    lines = Message.objects.filter(agent=agent, role__in=[Role.USER, Role.ASSISTANT]).exclude(content="")
    newest = lines.only("role", "content", "data", "created_at").order_by("-position")[:limit]
    return list(reversed(newest))


def _stored_rows(messages: QuerySet[Message]) -> QuerySet[Message, tuple[Any, ...]]:
    return messages.annotate(
        content_parts_text=Cast("content_parts", TextField()),
        audio_id=KT("audio__id"),
        function_call_text=Cast("function_call", TextField()),
        tool_calls_text=Cast("tool_calls", TextField()),
        references_text=Cast("references", TextField()),
    ).values_list(*STORED_COLUMNS)


# The empty list or object, as both databases give it back as text, needs no parsing.
def _json_list(text: str) -> list:
    return [] if text == "[]" else json.loads(text)


def _json_object(text: str) -> dict:
    return {} if text == "{}" else json.loads(text)


def _stored(rows: Iterable[tuple], *, pinned: bool) -> list[StoredMessage]:
    messages = []
    for (
        position,
        role,
        content,
        parts,
        name,
        refusal,
        audio_id,
        function_call,
        calls,
        call_id,
        importance,
        references,
        tokens,
        encoding,
    ) in rows:
        messages.append(
            StoredMessage(
                position=position,
                role=role,
                content=content,
                content_parts=_json_list(parts),
                name=name,
                refusal=refusal,
                audio_id=audio_id or "",
                function_call=_json_object(function_call),
                tool_calls=_json_list(calls),
                tool_call_id=call_id,
                pinned=pinned,
                importance=importance,
                references=_json_list(references),
                token_count=tokens,
                token_encoding=encoding,
            )
        )
    return messages


def message_pinned(*, agent: Agent, through: int) -> list[StoredMessage]:
    if through < 1:  # no message yet: nothing to read
        return []
    rows = _stored_rows(Message.objects.filter(agent=agent, pinned=True, position__lte=through))
    return _stored(rows.order_by("position"), pinned=True)


def message_history_point(*, agent: Agent, offset: int, through: int) -> HistoryPoint | None:
    """The first unpinned message up to position `through` that starts at or after `offset`
    tokens into the unpinned history; None when there is none."""
    row = (
        Message.objects.filter(agent=agent, pinned=False, history_offset__gte=offset, position__lte=through)
        .order_by("history_offset")
        .values_list("position", "history_offset")
        .first()
    )
    return HistoryPoint(*row) if row is not None else None


def message_turn_start(*, agent: Agent, turns: int, through: int) -> HistoryPoint | None:
    """Where the last `turns` turns up to position `through` begin: the `turns`-th newest user
    message; None when the conversation has fewer turns."""
    if through < 1:
        return None
    rows = (
        Message.objects.filter(agent=agent, role=Role.USER, position__lte=through)
        .order_by("-position")
        .values_list("position", "history_offset")[turns - 1 : turns]
    )
    return next((HistoryPoint(*row) for row in rows), None)


def _oldest_first(rows_before: Callable[[int], QuerySet], through: int) -> list[tuple]:
    """The rows up to position `through`, oldest first; read newest first a page at a time,
    each page a range scan of the (agent, position) index."""
    pages: list[list[tuple]] = []
    before = through + 1
    while True:
        page = list(rows_before(before).order_by("-position")[:PAGE_SIZE])
        pages.append(page)
        if len(page) < PAGE_SIZE:
            break
        before = page[-1][0]
    return [row for page in reversed(pages) for row in reversed(page)]


def _unpinned(agent: Agent, start_position: int, before: int) -> QuerySet[Message]:
    return Message.objects.filter(agent=agent, pinned=False, position__gte=start_position, position__lt=before)


def message_history(*, agent: Agent, start_position: int, through: int) -> list[StoredMessage]:
    """The unpinned messages from position `start_position` to `through`, oldest first."""
    if through < start_position:
        return []
    rows = _oldest_first(lambda before: _stored_rows(_unpinned(agent, start_position, before)), through)
    return _stored(rows, pinned=False)


def message_scores(*, agent: Agent, start_position: int, through: int) -> list[ScoredMessage]:
    """What the importance strategy scores of the same messages, without their contents."""
    rows = _oldest_first(
        lambda before: (
            _unpinned(agent, start_position, before)
            .annotate(references_text=Cast("references", TextField()))
            .values_list("position", "role", "importance", "references_text", "token_count")
        ),
        through,
    )
    return [
        ScoredMessage(position, role, importance, _json_list(references), tokens)
        for position, role, importance, references, tokens in rows
    ]


def message_rows(*, agent: Agent, positions: list[int]) -> list[StoredMessage]:
    """The unpinned messages at `positions` (ascending), whole."""
    rows: list[tuple] = []
    for first in range(0, len(positions), PAGE_SIZE // 2):
        chunk = positions[first : first + PAGE_SIZE // 2]
        # The range keeps the planner on the (agent, position) index.
        messages = Message.objects.filter(
            agent=agent, pinned=False, position__range=(chunk[0], chunk[-1]), position__in=chunk
        )
        rows.extend(_stored_rows(messages).order_by("position"))
    return _stored(rows, pinned=False)
