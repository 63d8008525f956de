"""Cutting a node's text into passages (pure): a turn each where the text is a dialogue (a
message each where it is a chat stored as JSON), a paragraph each elsewhere (a list's items
apart), those too long for the embedding model cut between lines (between words where a line is
itself too long), with character offsets into the text, so a hit can be shown and cited where it
is. Explained in docs/retrieval.md, "Passages"."""

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from memory.index import json_turns

# The embedding model reads 256 word pieces, some 1,000 characters of English: a longer passage
# would be ranked by its beginning alone.
MAX_CHARS = 1_000
# Paragraphs are joined while the passage they make stays within this ("}", "import os"), so
# that code does not become a passage a token. Turns are never joined: each is a unit of its own.
TARGET_CHARS = 60
# A line that starts a turn: a speaker's name or role and a colon, after an optional timestamp
# ("[14:02]", "2023-05-08 14:02"). "https://" is no turn: the colon must be followed by a space.
TURN = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*|\d{4}-\d\d-\d\d[ T]\d\d?:\d\d(?::\d\d)?[ \t]+|\d\d?:\d\d(?::\d\d)?[ \t]+)?"
    r"(?P<speaker>[^\W\d_][^:\n]{0,39}?)[ \t]*:(?:[ \t]|$)",
    re.MULTILINE,
)
# A dialogue has at least this many speakers who each speak more than once: a document with
# one "Date:" line or one "Note:" is not one.
SPEAKERS = 2
# A line that is an item of a list: a bullet or a number, a table's row, or a "key: value" or
# "key = value" setting. A paragraph mostly of items is cut a line each, as a dialogue a turn
# each: a note's list holds a fact a line, and a paragraph of them would drown each.
ITEM = re.compile(r"[ \t]*(?:[-*+•][ \t]|\d{1,3}[.)][ \t]|\||[^\W\d][\w .'-]{0,39}?[ \t]*[:=][ \t]*\S)")
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
LINE = re.compile(r"\n")
NON_BLANK = re.compile(r"\S")
SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    text: str


def turn_starts(text: str) -> list[int]:
    """Where the text's turns start, if it is a dialogue (at least SPEAKERS speakers starting
    more than one line each; only their lines start turns); [] if it is not."""
    lines = [(match.start(), match["speaker"].strip().lower()) for match in TURN.finditer(text)]
    counts = Counter(speaker for _, speaker in lines)
    speakers = {speaker for speaker, count in counts.items() if count > 1}
    if len(speakers) < SPEAKERS:
        return []
    return [at for at, speaker in lines if speaker in speakers]


def _spans(text: str, pattern: re.Pattern[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    """The non-blank spans of text[start:end] between matches of `pattern`."""
    at = start
    for match in pattern.finditer(text, start, end):
        if NON_BLANK.search(text, at, match.start()):
            yield at, match.start()
        at = match.end()
    if NON_BLANK.search(text, at, end):
        yield at, end


def _json_blocks(text: str, messages: list[tuple[int, int]]) -> Iterator[tuple[int, int, bool]]:
    """A JSON chat's messages as turns, and the paragraphs of what lies between them, but for
    the brackets, commas and keys that only join them."""
    at = 0
    for start, end in [*messages, (len(text), len(text))]:
        if not json_turns.is_structure(text, at, start):
            yield from ((a, b, False) for a, b in _spans(text, PARAGRAPH_BREAK, at, start))
        if start < end:
            yield start, end, True
        at = end


def _blocks(text: str) -> Iterator[tuple[int, int, bool]]:
    """The text's turns, and its paragraphs elsewhere (before the first turn, or all of a text
    that is no dialogue), in order, each (start, end, is a turn)."""
    messages = json_turns.message_spans(text)
    if messages:
        yield from _json_blocks(text, messages)
        return
    starts = turn_starts(text)
    yield from ((a, b, False) for a, b in _spans(text, PARAGRAPH_BREAK, 0, starts[0] if starts else len(text)))
    for start, end in zip(starts, [*starts[1:], len(text)], strict=False):
        if NON_BLANK.search(text, start, end):
            yield start, end, True


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A span longer than MAX_CHARS, cut between words (hard where there are none)."""
    spans, at = [], start
    while end - at > MAX_CHARS:
        cut = max(
            (m.start() for m in SPACE.finditer(text, at + MAX_CHARS // 2, at + MAX_CHARS)), default=at + MAX_CHARS
        )
        spans.append((at, cut))
        at = cut
    spans.append((at, end))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _joined(spans: Iterator[tuple[int, int]], limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive spans joined while what they make stays within `limit` characters."""
    first: int | None = None
    last = 0
    for a, b in spans:
        if first is not None and b - first > limit:
            yield first, last
            first = None
        if first is None:
            first = a
        last = b
    if first is not None:
        yield first, last


# Lines looked at to tell a list: a paragraph of megabytes is not copied or split whole.
LIST_SAMPLE = 64


def is_list(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether text[start:end], a paragraph, is a list: more than one line, at least half of its
    first LIST_SAMPLE lines items."""
    lines = list(itertools.islice(_spans(text, LINE, start, len(text) if end is None else end), LIST_SAMPLE))
    items = sum(1 for a, _ in lines if ITEM.match(text, a))
    return len(lines) > 1 and 2 * items >= len(lines)


def _pieces(text: str, start: int, end: int, turn: bool) -> Iterator[tuple[int, int]]:
    """The block whole; or, a list (not a turn) or a block longer than MAX_CHARS, its lines
    (a line too long alone cut between words), joined up to TARGET_CHARS in a list and to
    MAX_CHARS elsewhere."""
    listed = not turn and is_list(text, start, end)
    if end - start <= MAX_CHARS and not listed:
        yield start, end
        return
    lines = (span for line in _spans(text, LINE, start, end) for span in _split_long(text, *line))
    yield from _joined(lines, TARGET_CHARS if listed else MAX_CHARS)


def _trimmed(text: str, start: int, end: int) -> Piece:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Piece(start, end, text[start:end])


def cut(text: str) -> Iterator[Piece]:
    """The text's passages, one at a time: a turn each in a dialogue (a message each in a JSON
    chat), paragraphs elsewhere (those shorter than TARGET_CHARS joined; a list's items apart),
    none longer than MAX_CHARS."""
    pending: list[tuple[int, int]] = []  # short paragraphs, joined when the next block comes
    for start, end, turn in _blocks(text):
        if not turn and end - start <= TARGET_CHARS:
            pending.append((start, end))
            continue
        yield from (_trimmed(text, a, b) for a, b in _joined(iter(pending), TARGET_CHARS))
        pending = []
        yield from (_trimmed(text, a, b) for a, b in _pieces(text, start, end, turn))
    yield from (_trimmed(text, a, b) for a, b in _joined(iter(pending), TARGET_CHARS))


def label(name: str, description: str) -> str:
    """A node's name and description, as one passage."""
    return f"{name}\n{description}".strip()
