"""What is measured of a ranking, pure: which units a returned passage covers (its span overlaps
theirs), recall at the unit and at the document, the gold answer held by a text, and a long
query's tail within what the API takes. Recall and containment are the retrieval benchmark's."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from benchmarks.measures.retrieval import contains, recall
from benchmarks.realdata.shape import Question, Unit

KS = (1, 5, 10)


@dataclass(frozen=True)
class Found:
    """One item of a ranking: the document it is in and the units it covers."""

    document: str
    units: frozenset[str]


class Units:
    """A dataset's units by document, for finding those a span overlaps."""

    def __init__(self, units: Iterable[Unit]):
        self.by_document: dict[str, list[Unit]] = {}
        for unit in units:
            self.by_document.setdefault(unit.document, []).append(unit)
        for spans in self.by_document.values():
            spans.sort(key=lambda unit: unit.start)
        self.starts = {key: [unit.start for unit in spans] for key, spans in self.by_document.items()}

    def overlapping(self, document: str, start: int, end: int) -> frozenset[str]:
        """The units of `document` whose span shares a character with [start, end)."""
        spans = self.by_document.get(document, [])
        last = bisect.bisect_left(self.starts.get(document, []), end)
        return frozenset(unit.key for unit in spans[:last] if unit.end > start)


def unit_recall(question: Question, found: Sequence[Found], k: int) -> float:
    """The share of the question's gold units covered by the first k items."""
    return recall(question.gold, [unit for item in found[:k] for unit in item.units])


def document_recall(gold_documents: Sequence[str], found: Sequence[Found], k: int) -> float:
    """The share of the gold's documents among the first k distinct documents of the items: a
    ranking of units ranks each document by its best unit."""
    return recall(gold_documents, list(dict.fromkeys(item.document for item in found)), k)


def gold_documents(question: Question, units: dict[str, Unit]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(units[key].document for key in question.gold))


def holds_answer(text: str, question: Question) -> bool:
    """Whether `text` holds one of the gold answer's accepted forms, every part of it."""
    return any(contains(text, parts) for parts in question.accepted)


def tail(text: str, limit: int) -> str:
    """`text`, or its last `limit` characters from a line's (else a word's) start: the latest turns
    of a dialogue asked as a query."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    for mark in ("\n", " "):
        at = cut.find(mark)
        if 0 <= at < len(cut) - 1:
            return cut[at + 1 :]
    return cut
