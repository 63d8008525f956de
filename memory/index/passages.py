"""Cutting a node's text into passages (pure): a few hundred tokens each, cut at paragraph
boundaries, else at line boundaries, else between words, with character offsets into the text,
so a hit can be shown and cited where it is."""

import re
from dataclasses import dataclass

# About 80 tokens of English. Measured on conversation logs (docs/retrieval.md): at 700
# characters a planted fact drowned among the small talk around it, and the vector ranking's
# top five passages held it for 46% of the questions; at 300, 66%; at 150 (54%) a passage lost
# its context.
TARGET_CHARS = 320
MAX_CHARS = 1_200
PARAGRAPH = re.compile(r"\n[ \t]*\n")
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
    """A span longer than MAX_CHARS, cut at lines, then between words, then hard."""
    if end - start <= MAX_CHARS:
        return [(start, end)]
    lines = _spans(text, start, end, LINE)
    if len(lines) > 1:
        return [span for a, b in lines for span in _split_long(text, a, b)]
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
    """Paragraphs (and the lines or words of any too long) joined up to TARGET_CHARS."""
    units = [span for a, b in _spans(text, 0, len(text), PARAGRAPH) for span in _split_long(text, a, b)]
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
