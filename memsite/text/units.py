"""A text cut into the units ranking scores: its sentences and lines, each with its roots and
those of the headings above it. Pure: no Django, no database. Explained in docs/text.md."""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memsite.text.words import roots

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# A markdown heading, or the `Node:` line a prompt introduces a node's content with.
HEADING = re.compile(r"^(?:(?P<hashes>#{1,6})\s+\S|Node:\s)")


@dataclass(frozen=True)
class Unit:
    """A text scored as a whole: a sentence, a line, an option's label."""

    text: str
    own: frozenset[str]  # its terms
    under: frozenset[str] = frozenset()  # the terms of the headings it sits under
    length: int = 0  # its terms, repeats counted
    heading: bool = False

    @property
    def terms(self) -> frozenset[str]:
        return self.own | self.under


def unit(text: str, *, under: frozenset[str] = frozenset(), heading: bool = False) -> Unit:
    own = roots(text)
    return Unit(text=text, own=frozenset(own), under=under, length=len(own), heading=heading)


def _pieces(text: str) -> Iterator[str]:
    """The text's sentences and lines, stripped, in order; none of a single character."""
    for part in SENTENCE_END.split(text):
        part = part.strip()
        if len(part) > 1:
            yield part


def sentences(text: str) -> tuple[str, ...]:
    """The text's sentences and lines in order, once each."""
    return tuple(dict.fromkeys(_pieces(text)))


def headed_units(text: str) -> tuple[Unit, ...]:
    """The text's sentences in order, once each, every one with the terms of the headings above
    it: a table row or a list item is read under its title."""
    stack: list[tuple[int, frozenset[str]]] = []
    units: dict[str, Unit] = {}
    for line in text.splitlines():
        match = HEADING.match(line.strip())
        under = frozenset().union(*(heading_terms for _, heading_terms in stack))
        if match:
            level = len(match["hashes"] or "")
            units.setdefault(line.strip(), unit(line.strip(), under=under, heading=True))
            stack = [entry for entry in stack if entry[0] < level] + [(level, frozenset(roots(line)))]
            continue
        for part in _pieces(line):
            units.setdefault(part, unit(part, under=under))
    return tuple(units.values())
