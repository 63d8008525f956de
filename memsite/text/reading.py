"""A reading: a question over a text and the options offered for it, with what heuristics
ask of them (the text's sentences ranked for the question, its keywords, the best option).
Pure: no Django, no database. Explained in docs/text.md."""

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from memsite.text.ranking import Cosines, Scored, rank
from memsite.text.units import Unit, headed_units, sentences
from memsite.text.words import frequent_words, overlap, terms

REPRESENTATIVE_TERMS = 4  # a sentence with fewer says too little to describe a text


@dataclass(frozen=True)
class Option:
    position: int  # 0-based order in the prompt
    number: int | None  # as numbered in the prompt ("3. ..."); None for an unnumbered list
    key: str | None  # an id shown with it ("3. [read_file /notes.md] ..."), if any
    text: str
    score: float

    @property
    def index(self) -> int:
        return self.number if self.number is not None else self.position

    @property
    def ref(self) -> str:
        return self.key or (str(self.number) if self.number is not None else self.text)


def numbered(query: str, texts: Sequence[str], *, keys: Sequence[str | None] = ()) -> tuple[Option, ...]:
    """Options numbered from 1, as a prompt lists them, each scored by the terms it shares with
    `query`; `keys`, when given, are the ids shown beside them."""
    query_terms = frozenset(terms(query))
    keyed = list(keys) or [None] * len(texts)
    return tuple(
        Option(position=at, number=at + 1, key=key, text=text, score=overlap(query_terms, f"{key or ''} {text}"))
        for at, (key, text) in enumerate(zip(keyed, texts, strict=True))
    )


@dataclass(frozen=True)
class Reading:
    """What a prompt asks, as data: its query, the text it is asked over and the options it
    offers. Whoever writes a prompt gives its reading beside it, so heuristics never parse prose."""

    query: str
    context: str
    options: tuple[Option, ...] = ()
    cosines: Cosines | None = field(default=None, repr=False)  # what ranking fuses with, when there is a model
    given: Any = None  # what the prompt was written from, for a reply's own offline heuristic

    @cached_property
    def query_terms(self) -> frozenset[str]:
        return frozenset(terms(self.query))

    @cached_property
    def best(self) -> Option | None:
        if not self.options:
            return None
        return max(self.options, key=lambda option: (option.score, -option.position))

    @cached_property
    def ranked_options(self) -> tuple[Option, ...]:
        return tuple(sorted(self.options, key=lambda option: (-option.score, option.position)))

    @cached_property
    def sentences(self) -> tuple[str, ...]:
        return sentences(self.context)

    @cached_property
    def units(self) -> tuple[Unit, ...]:
        return headed_units(self.context)

    @cached_property
    def body(self) -> tuple[Unit, ...]:
        """The text's own sentences and lines: not its headings, nor the line naming the node."""
        return tuple(item for item in self.units if not item.heading)

    @cached_property
    def ranked_sentences(self) -> tuple[tuple[float, str], ...]:
        """(score, sentence), most relevant to the query first; ties keep the text's order."""
        return tuple((scored.score, scored.text) for scored in rank(self.query, self.units, cosines=self.cosines))

    def rank(self, query: str) -> list[Scored]:
        """The body's sentences best first for `query` (a question of several the prompt asks)."""
        if query not in self._ranks:
            self._ranks[query] = rank(query, self.body, cosines=self.cosines)
        return self._ranks[query]

    @cached_property
    def _ranks(self) -> dict[str, list[Scored]]:
        return {}

    @cached_property
    def keywords(self) -> tuple[str, ...]:
        return frequent_words(self.context or self.query)

    def representative(self) -> str:
        """The body's sentence closest to the whole: for each of its terms, how many of the
        body's sentences hold it, summed, per square root of its own count (a cosine with the
        text's term vector), among those of REPRESENTATIVE_TERMS terms or more when there are."""
        counts = Counter(term for item in self.body for term in item.own)
        candidates = [item for item in self.body if len(item.own) >= REPRESENTATIVE_TERMS] or list(self.body)
        if not candidates:
            return ""
        closeness = [sum(counts[term] for term in item.own) / math.sqrt(len(item.own) or 1) for item in candidates]
        return candidates[max(range(len(candidates)), key=lambda at: (closeness[at], -at))].text

    @property
    def confidence(self) -> float:
        """The best option's overlap squashed into [0, 1], or the best sentence's score."""
        if self.best:
            return round(self.best.score / (1.0 + self.best.score), 3)
        return round(self.ranked_sentences[0][0], 3) if self.ranked_sentences else 0.0

    def relevant(self, count: int) -> list[str]:
        """Up to `count` sentences sharing terms with the query, in the text's order."""
        chosen = [sentence for score, sentence in self.ranked_sentences[:count] if score > 0]
        return [sentence for sentence in self.sentences if sentence in chosen]

    def lead(self, count: int) -> list[str]:
        return list(self.sentences[:count])
