"""Reads of conversations, shaped for assembly: plain rows with only the columns it uses,
found through the indexes on (agent, position) and (agent, history_offset), so the cost of a
read follows what it returns, not how long the conversation is."""

from dataclasses import dataclass

from django.db.models import QuerySet

from agents.models import Agent, Message, Role

PAGE_SIZE = 1_000
STORED_COLUMNS = (
    "position",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "pinned",
    "importance",
    "references",
    "token_count",
    "token_encoding",
)


@dataclass(frozen=True)
class StoredMessage:
    position: int
    role: str
    content: str
    tool_calls: list
    tool_call_id: str
    pinned: bool
    importance: float
    references: list
    token_count: int
    token_encoding: str


@dataclass(frozen=True)
class HistoryPoint:
    """A message's position and the unpinned tokens before it."""

    position: int
    offset: int


def message_list(*, agent: Agent) -> QuerySet[Message]:
    return Message.objects.filter(agent=agent).order_by("position")


def message_pinned(*, agent: Agent, through: int) -> list[StoredMessage]:
    rows = (
        Message.objects.filter(agent=agent, pinned=True, position__lte=through)
        .order_by("position")
        .values_list(*STORED_COLUMNS)
    )
    return [StoredMessage(*row) for row in rows]


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
    rows = (
        Message.objects.filter(agent=agent, role=Role.USER, position__lte=through)
        .order_by("-position")
        .values_list("position", "history_offset")[turns - 1 : turns]
    )
    return next((HistoryPoint(*row) for row in rows), None)


def message_history(*, agent: Agent, start_position: int, through: int) -> list[StoredMessage]:
    """The unpinned messages from position `start_position` to `through`, oldest first; read
    newest first a page at a time, each page a range scan of the (agent, position) index."""
    pages: list[list[tuple]] = []
    before = through + 1
    while True:
        rows = Message.objects.filter(
            agent=agent, pinned=False, position__gte=start_position, position__lt=before
        )
        page = list(rows.order_by("-position").values_list(*STORED_COLUMNS)[:PAGE_SIZE])
        pages.append(page)
        if len(page) < PAGE_SIZE:
            break
        before = page[-1][0]
    return [StoredMessage(*row) for page in reversed(pages) for row in reversed(page)]
