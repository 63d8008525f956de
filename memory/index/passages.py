"""Cutting a node's text into passages (pure): a line each, short lines joined and long ones cut
between words, with character offsets into the text, so a hit can be shown and cited where it
is."""

import re
from collections.abc import Iterator
from dataclasses import dataclass

# A fact is usually said in one line (a turn, a note, a setting), and a sentence embedding is
# the mean of its tokens: lines joined into a passage of 320 characters drowned the fact among
# its neighbours, and the evidence's document was in the top five 53% of the time against 66%
# at a line each (benchmarks/retrieval.py; docs/retrieval.md). Lines are joined while the passage
# they make stays within this ("}", "import os"), so code does not become a passage a token.
TARGET_CHARS = 60
MAX_CHARS = 1_200
LINE = re.compile(r"\n")
SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    text: str


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the text's lines, blank ones left out, one at a time."""
    at = 0
    for match in LINE.finditer(text):
        if text[at : match.start()].strip():
            yield at, match.start()
        at = match.end()
    if text[at:].strip():
        yield at, len(text)


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line longer than MAX_CHARS, cut between words (hard where there are none)."""
    spans, at = [], start
    while end - at > MAX_CHARS:
        cut = max(
            (m.start() for m in SPACE.finditer(text, at + MAX_CHARS // 2, at + MAX_CHARS)), default=at + MAX_CHARS
        )
        spans.append((at, cut))
        at = cut
    spans.append((at, end))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _trimmed(text: str, start: int, end: int) -> Piece:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Piece(start, end, text[start:end])


def cut(text: str) -> Iterator[Piece]:
    """Lines (those too long cut between words) joined up to TARGET_CHARS, one at a time: a
    long text of short lines is many pieces."""
    first: int | None = None
    last = 0
    for a, b in (span for line in _lines(text) for span in _split_long(text, *line)):
        if first is not None and b - first > TARGET_CHARS:
            yield _trimmed(text, first, last)
            first = None
        if first is None:
            first = a
        last = b
    if first is not None:
        yield _trimmed(text, first, last)


def label(name: str, description: str) -> str:
    """A node's name and description, as one passage."""
    return f"{name}\n{description}".strip()
