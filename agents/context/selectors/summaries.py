"""Reads of conversation summaries."""

from dataclasses import dataclass

from agents.context.models import Agent, Summary

STORED_COLUMNS = (
    "id",
    "since",
    "through",
    "history_start",
    "history_end",
    "level",
    "content",
    "token_count",
    "token_encoding",
)


@dataclass(frozen=True)
class StoredSummary:
    id: int
    since: int
    through: int
    history_start: int
    history_end: int
    level: int
    content: str
    token_count: int
    token_encoding: str


def summary_latest(*, agent: Agent, through: int) -> StoredSummary | None:
    """The written summary that reaches furthest without passing position `through`."""
    row = (
        Summary.objects.filter(agent=agent, status=Summary.Status.DONE, through__lte=through)
        .order_by("-through")
        .values_list(*STORED_COLUMNS)
        .first()
    )
    return StoredSummary(*row) if row is not None else None


def summary_list(*, agent: Agent):
    return Summary.objects.filter(agent=agent).order_by("-through")
