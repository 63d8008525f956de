"""The retrieval benchmark's measures (pure): the BM25 baseline, evidence recall, and answers
scored against the gold answer by containment and token F1."""

from __future__ import annotations

import math
import re
import string
from collections import Counter, defaultdict
from collections.abc import Sequence

WORD = re.compile(r"[^\W_]+")
# Function words only: a ranking baseline that kept them would be a straw man.
STOPWORDS = frozenset(
    """a an and are as at be been but by can did do does for from had has have how i if in into is it
    its me my of on or our she so that the their them they this to was we were what when where which
    who whom why will with you your""".split()
)


def tokens(text: str) -> list[str]:
    """The one tokenizer of the baseline, for documents and questions alike: lower-cased runs of
    letters and digits (an underscore splits: `max_retries` is two words), function words out."""
    return [word for word in WORD.findall(text.lower()) if word not in STOPWORDS]


class BM25:
    """Okapi BM25 over whole documents, with the non-negative idf of Lucene."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.lengths: list[int] = []
        for index, document in enumerate(documents):
            counts = Counter(tokens(document))
            self.lengths.append(sum(counts.values()))
            for term, count in counts.items():
                self.postings[term].append((index, count))
        self.average = sum(self.lengths) / max(len(self.lengths), 1)

    def idf(self, term: str) -> float:
        found = len(self.postings.get(term, ()))
        return math.log(1 + (len(self.lengths) - found + 0.5) / (found + 0.5))

    def scores(self, query: str) -> dict[int, float]:
        """Score of every document that shares a term with the query."""
        scores: dict[int, float] = defaultdict(float)
        for term in set(tokens(query)):
            idf = self.idf(term)
            for index, count in self.postings.get(term, ()):
                norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / self.average)
                scores[index] += idf * count * (self.k1 + 1) / (count + norm)
        return scores

    def top(self, query: str, k: int) -> list[int]:
        """The k best documents' indexes, best first (ties: the earlier document)."""
        scores = self.scores(query)
        return sorted(scores, key=lambda index: (-scores[index], index))[:k]


def recall(evidence: Sequence[str], ranked: Sequence[str], k: int | None = None) -> float:
    """The share of the evidence's documents among the first k ranked (all when k is None)."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("recall of a question without evidence")
    return len(wanted & set(ranked[:k] if k is not None else ranked)) / len(wanted)


ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = str.maketrans(string.punctuation, " " * len(string.punctuation))


def normalize(text: str) -> str:
    """As SQuAD's evaluation: lower case, punctuation and articles out, spaces collapsed."""
    return " ".join(ARTICLES.sub(" ", text.lower().translate(PUNCTUATION)).split())


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD's token F1 between an answer and the gold answer."""
    predicted, wanted = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall_ = common / len(predicted), common / len(wanted)
    return 2 * precision * recall_ / (precision + recall_)


def contains(prediction: str, parts: Sequence[str]) -> bool:
    """Whether the answer holds every part of the gold answer (as whole words)."""
    said = f" {normalize(prediction)} "
    return bool(parts) and all(f" {normalize(part)} " in said for part in parts)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
