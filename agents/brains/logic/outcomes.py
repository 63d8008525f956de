"""What an action came to: the outcome a tick records, and what it perceived."""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Perceived:
    """A path of the memory tree or a URL the action read: marked explored by the tick."""

    kind: str  # "path" or "url"
    key: str
    summary: str
    folder: bool = False  # a listed folder: what to explore next is looked for in it again


@dataclass(frozen=True)
class Outcome:
    ok: bool
    summary: str
    # Met something new: a note made, a search started. What it perceived is new when it was
    # not explored yet, which the tick learns as it marks it explored.
    novel: bool = False
    # Did anything: an idle tick's emotions and hormones only decay toward rest.
    happened: bool = True
    perceived: tuple[Perceived, ...] = ()
    content: str = ""  # what was read, within MEMSITE_TICK_READ_TOKENS: the reflection sees it
    where: str = ""  # the path or URL the action was about
    state: dict[str, Any] = field(default_factory=dict)  # memory.json state keys to set
    counters: dict[str, int] = field(default_factory=dict)  # memory.json state counters to add to
    detail: dict[str, Any] = field(default_factory=dict)  # what it made: a node, a search, a message


def refused(message: str, *, where: str = "") -> Outcome:
    return Outcome(ok=False, summary=message, where=where)
