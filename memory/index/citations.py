"""Where in a node an answer came from: character ranges of its text, for citations."""

import re
from dataclasses import dataclass

from memory.index.fulltext import query_words
from memory.models import Passage

SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_QUOTE = 12  # characters: a shorter piece of an answer says too little to be looked for
MAX_CITATIONS = 3
SNIPPET_CHARS = 300


@dataclass(frozen=True)
class Citation:
    node_id: str
    start: int
    end: int


def locate(answer: str, passages: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """Ranges of the text holding the answer: each sentence of it found word for word, else
    the passage sharing the most words with it (an LLM's answer is rarely a quotation)."""
    ranges = []
    for sentence in (part.strip() for part in SENTENCE.split(answer)):
        if len(sentence) < MIN_QUOTE:
            continue
        for start, _, text in passages:
            at = text.find(sentence)
            if at >= 0:
                ranges.append((start + at, start + at + len(sentence)))
                break
    if ranges:
        return list(dict.fromkeys(ranges))[:MAX_CITATIONS]
    wanted = set(query_words(answer))
    shared = [(len(wanted & set(query_words(text))), start, end) for start, end, text in passages]
    best = max(shared, default=(0, 0, 0))
    return [(best[1], best[2])] if best[0] else []


def cite(*, node_id: str, answer: str) -> list[Citation]:
    passages = list(
        Passage.objects.filter(node_id=node_id, kind=Passage.Kind.CONTENT).order_by("seq").values_list("start", "end", "text")
    )
    return [Citation(node_id, start, end) for start, end in locate(answer, passages)]


def cited_passages(*, node_id: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The node's passages that hold a cited range: (start, end, the passage's first
    SNIPPET_CHARS characters), in the text's order."""
    if not ranges:
        return []
    rows = Passage.objects.filter(node_id=node_id, kind=Passage.Kind.CONTENT).order_by("seq").values_list("start", "end", "text")
    return [
        (start, end, text[:SNIPPET_CHARS])
        for start, end, text in rows
        if any(cited_start < end and start < cited_end for cited_start, cited_end in ranges)
    ]
