"""Where in a node an answer came from: character ranges of its text, for citations."""

import datetime as dt
import re
from typing import NamedTuple

from django.db.models import Q
from django.db.models.functions import Substr

from memory.index.fulltext import query_words
from memory.index.retrieve import SNIPPET_CHARS
from memory.models import Passage

SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_QUOTE = 12  # characters: a shorter piece of an answer says too little to be looked for
MAX_CITATIONS = 3


class CitablePassage(NamedTuple):
    """A content passage of a node, as `locate` looks in it."""

    start: int
    end: int
    text: str
    date: dt.date | None = None
    node: str = ""


Quote = tuple[CitablePassage, int, int]  # the passage a range of an answer is in, and the range


def locate(answer: str, passages: list[CitablePassage], *, quoted_only: bool = False) -> list[Quote]:
    """Ranges of the text holding the answer, each with its passage: each sentence of it found
    word for word, else the lines of the text the answer quotes (a reader that joins lines of a
    table or a list), else, unless `quoted_only`, the passage sharing the most words with it (an
    LLM's answer is rarely a quotation)."""
    quotes: list[Quote] = []
    for sentence in (part.strip() for part in SENTENCE.split(answer)):
        if len(sentence) < MIN_QUOTE:
            continue
        for passage in passages:
            at = passage.text.find(sentence)
            if at >= 0:
                quotes.append((passage, passage.start + at, passage.start + at + len(sentence)))
                break
    quotes = quotes or _quoted_lines(answer, passages)
    if quotes or quoted_only:
        return list(dict.fromkeys(quotes))[:MAX_CITATIONS]
    wanted = set(query_words(answer))
    shared = [(len(wanted & set(query_words(passage.text))), position) for position, passage in enumerate(passages)]
    most, position = max(shared, default=(0, 0))
    return [(passages[position], passages[position].start, passages[position].end)] if most else []


def _quoted_lines(answer: str, passages: list[CitablePassage]) -> list[Quote]:
    """The ranges of the passages' lines that the answer holds word for word, in order."""
    quotes: list[Quote] = []
    for passage in passages:
        at = 0
        for line in passage.text.split("\n"):
            quoted = line.strip()
            if len(quoted) >= MIN_QUOTE and quoted in answer:
                begin = passage.start + at + line.index(quoted)
                quotes.append((passage, begin, begin + len(quoted)))
            at += len(line) + 1
    return quotes


def content_passages(*, node_id: str) -> list[CitablePassage]:
    """The node's content passages in the text's order: what `locate` looks in."""
    rows = (
        Passage.objects.filter(node_id=node_id, kind=Passage.Kind.CONTENT)
        .order_by("seq")
        .values_list("start", "end", "text", "date")
    )
    return [CitablePassage(*row, node=node_id) for row in rows]


def cited_passages(*, cited: dict[str, list[tuple[int, int]]]) -> dict[str, list[tuple[int, int, str]]]:
    """Per node, its passages that hold one of its cited ranges: (start, end, the passage's
    first SNIPPET_CHARS characters), in the text's order; one query for every node."""
    overlapping = Q()
    for node_id, ranges in cited.items():
        for start, end in ranges:
            overlapping |= Q(node_id=node_id, start__lt=end, end__gt=start)
    if not overlapping:
        return {}
    rows = (
        Passage.objects.filter(overlapping, kind=Passage.Kind.CONTENT)
        .order_by("node_id", "seq")
        .values_list("node_id", "start", "end", Substr("text", 1, SNIPPET_CHARS))
    )
    passages: dict[str, list[tuple[int, int, str]]] = {}
    for node_id, start, end, snippet in rows:
        passages.setdefault(node_id, []).append((start, end, snippet))
    return passages
