"""Cutting a node's text into passages (pure): a line each, short lines joined and long ones cut
between words, with character offsets into the text, so a hit can be shown and cited where it
is."""

import re
from dataclasses import dataclass

# A fact is usually said in one line (a turn, a note, a setting), and a sentence embedding is
# the mean of its tokens: lines joined into a passage of 320 characters drowned the fact among
# its neighbours, and the evidence's document was in the top five 53% of the time against 66%
# at a line each (benchmarks/retrieval.py; docs/retrieval.md). Lines shorter than this are
# joined to the next ("}", "import os"), so code does not become a passage a token.
TARGET_CHARS = 60
MAX_CHARS = 1_200
LINE = re.compile(r"\n")
SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    text: str


def _spans(text: str, start: int, end: int, boundary: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans of text[start:end] between `boundary` matches, empty ones left out."""
    spans, at = [], start
    for match in boundary.finditer(text, start, end):
        spans.append((at, match.start()))
        at = match.end()
    spans.append((at, end))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line longer than MAX_CHARS, cut between words (hard where there are none)."""
    spans, at = [], start
    while end - at > MAX_CHARS:
        cut = max((m.start() for m in SPACE.finditer(text, at + MAX_CHARS // 2, at + MAX_CHARS)), default=at + MAX_CHARS)
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


def cut(text: str) -> list[Piece]:
    """Lines (those too long cut between words) joined up to TARGET_CHARS."""
    units = [span for a, b in _spans(text, 0, len(text), LINE) for span in _split_long(text, a, b)]
    pieces: list[Piece] = []
    first = last = None
    for a, b in units:
        if first is not None and b - first > TARGET_CHARS:
            pieces.append(_trimmed(text, first, last))
            first = None
        if first is None:
            first = a
        last = b
    if first is not None:
        pieces.append(_trimmed(text, first, last))
    return [piece for piece in pieces if piece.text]


def label(name: str, description: str) -> str:
    """A node's name and description, as one passage."""
    return f"{name}\n{description}".strip()
