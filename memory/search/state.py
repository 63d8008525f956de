"""The state of a search's walk, kept in `Search.state` and saved with every step."""

import datetime as dt

from pydantic import BaseModel, Field


class Citation(BaseModel):
    node: str
    start: int  # character offsets in the node's text
    end: int
    date: dt.date | None = None  # the cited passage's (Passage.date)


MAX_CITATIONS = 10  # of one answer: the latest kept


class QuestionAnswer(BaseModel):
    question: str
    answer: str = ""
    node_ids: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    complete: bool = False

    def cite(self, citations: list[Citation]) -> None:
        fresh = [citation for citation in citations if citation not in self.citations]
        self.citations = [*self.citations, *fresh][-MAX_CITATIONS:]


class WalkState(BaseModel):
    # One entry per question, original ones first; `complete` ones are answered.
    answers: list[QuestionAnswer]
    start: str | None = None  # the start node's id, kept should the node be deleted
    # Questions that arose while reading, each handed to a sub-search (or left open).
    arisen: list[str] = Field(default_factory=list)
    # Kept apart: visited nodes were entered (read, or a folder walked to the end); unviable ones
    # were judged by the router unable to help. Neither is shown to the router again.
    visited: list[str] = Field(default_factory=list)
    unviable: list[str] = Field(default_factory=list)
    # Per folder ("" for the top of the tree): options shown in a batch and not chosen, so the
    # next batch shows others.
    passed: dict[str, list[str]] = Field(default_factory=dict)
    # Node ids from below the start node down to the current node; empty when at the start.
    trail: list[str] = Field(default_factory=list)
    chunk: int = 0  # the next chunk of the current node's content to read
    tools_tried: list[str] = Field(default_factory=list)  # folders whose tool tree was offered
    tool: str | None = None  # a tool chosen, to be called next
    # Per folder where an exploratory tool was called: the ToolCall whose results the walk
    # turns to while there.
    tool_results: dict[str, int] = Field(default_factory=dict)
    # What was known (answers and notes) when the walk last started: a restart needs more.
    known_at_start: int = 0
    restarts: int = 0
    # What the walk learnt outside the nodes' own text: sub-search answers, user answers.
    notes: list[str] = Field(default_factory=list)
    found: list[str] = Field(default_factory=list)  # nodes that are themselves answers
    # The router was offered the nodes of the best passages before routing from the start.
    shortcut_done: bool = False
    # The reader was shown the index's best passages, of any node, before the walk began.
    first_reading_done: bool = False
    child: int | None = None  # the running sub-search
    # Readings in a row that added nothing to any answer: once every question has one in part, a
    # walk that goes on finding nothing ends (MEMSITE_SEARCH_SETTLE_READS).
    reads_since_found: int = 0

    @property
    def remaining(self) -> list[str]:
        return [entry.question for entry in self.answers if not entry.complete]

    @property
    def all_answered_in_part(self) -> bool:
        return all(entry.answer for entry in self.answers)

    @property
    def current(self) -> str | None:
        return self.trail[-1] if self.trail else None

    @property
    def known(self) -> int:
        return len(self.notes) + sum(1 for entry in self.answers if entry.answer)

    def mark_visited(self, node_id: str) -> None:
        if node_id not in self.visited:
            self.visited.append(node_id)

    def mark_unviable(self, node_id: str) -> None:
        if node_id not in self.unviable:
            self.unviable.append(node_id)
