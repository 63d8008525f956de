"""Units ranked for a question by a hybrid score: the weighted share of the question's roots a
unit holds (rarer roots weighing more, as in BM25), raised by the cosine of sentence embeddings
when the caller has a model. Pure: no Django, no database. Explained in docs/text.md."""

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memsite.text.units import Unit
from memsite.text.words import roots

# Each text's cosine with the question, or None when there is no model to embed them with.
Cosines = Callable[[str, Sequence[str]], list[float] | None]

K1, B = 1.2, 0.75  # BM25's saturation and length normalisation: among equal shares, short units first
ONE_TERM = 0.3  # a unit holding one term of a question of several: below any partial answer
LEXICAL_WEIGHT = 0.4  # of the lexical share, in the blend with the embedding's score
# all-MiniLM-L6-v2's cosines with a question: a sentence on another subject stays under the
# floor, one on the question's subject is near 0.6 (not an answer for that), a paraphrase of it
# 0.8 and up: alone, a cosine answers only at the top.
COSINE_FLOOR, COSINE_FULL = 0.3, 0.9


@dataclass(frozen=True)
class Scored:
    score: float  # in [0, 1]
    text: str
    position: int  # in the units scored


class Lexical:
    """BM25's statistics over the units scored together: a term held by few of them weighs more."""

    def __init__(self, units: Sequence[Unit]):
        self.count = len(units)
        # Counted over the units' own terms: a heading's terms, shared by all the lines under
        # it, still count as rare when the question names them.
        self.held_by = Counter(term for item in units for term in item.own)
        self.average = max(1.0, sum(item.length for item in units) / max(len(units), 1))

    def weight(self, term: str) -> float:
        """BM25's idf; a term no unit holds weighs as the rarest held term, not more."""
        held = max(self.held_by.get(term, 0), 1)
        return math.log(1 + (self.count - held + 0.5) / (held + 0.5))

    def share(self, wanted: frozenset[str], item: Unit) -> float:
        """The weighted share of the question's terms the unit holds, itself or by its
        headings; nothing unless it holds one itself, and at most ONE_TERM for a single term
        of a question of several."""
        held = wanted & item.terms
        if not wanted or not wanted & item.own:
            return 0.0
        weights = {term: self.weight(term) for term in wanted}
        share = sum(weights[term] for term in held) / sum(weights.values())
        return min(share, ONE_TERM) if len(held) < min(2, len(wanted)) else share

    def bm25(self, wanted: frozenset[str], item: Unit) -> float:
        norm = K1 * (1 - B + B * item.length / self.average)
        return sum(self.weight(term) * (K1 + 1) / (1 + norm) for term in wanted & item.own)


def fuse(share: float, cosine: float) -> float:
    """The lexical share, raised by a close embedding: a paraphrase sharing no word can answer;
    a unit holding the question's terms is never demoted by a model that finds it far (tables
    and code lines embed poorly)."""
    semantic = min(1.0, max(0.0, (cosine - COSINE_FLOOR) / (COSINE_FULL - COSINE_FLOOR)))
    return max(share, LEXICAL_WEIGHT * share + (1 - LEXICAL_WEIGHT) * semantic)


def rank(query: str, units: Sequence[Unit], *, cosines: Cosines | None) -> list[Scored]:
    """The units best first by hybrid score; equal scores by BM25, then in the text's order.
    Without `cosines`, or when it has no model, the score is the lexical share alone."""
    wanted = frozenset(roots(query))
    lexical = Lexical(units)
    closeness = cosines(query, [item.text for item in units]) if units and cosines is not None else None
    scored = []
    for position, item in enumerate(units):
        share = lexical.share(wanted, item)
        score = share if closeness is None else fuse(share, closeness[position])
        scored.append((round(score, 6), lexical.bm25(wanted, item), position, item.text))
    scored.sort(key=lambda entry: (-entry[0], -entry[1], entry[2]))
    return [Scored(score=score, text=text, position=position) for score, _, position, text in scored]
