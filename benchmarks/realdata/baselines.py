"""The baselines measured beside memsite in the same run, over the very units and documents it
holds, each in the question's scope and among its candidates: BM25 over the units, BM25 over
whole documents (the retrieval benchmark's BM25), and the ranking of the units by meaning alone
with memsite's own embedding model."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks.measures.retrieval import BM25
from benchmarks.realdata.measures import Found
from benchmarks.realdata.shape import Dataset, Question, Unit
from memory.index.embeddings import embedder
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default

DEPTH = 10  # the longest ranking kept: recall is read at 1, 5 and 10
EMBED_BATCH = 64


class Baselines:
    """Each ranking takes the question and its query: the text memsite is asked (`measures.tail`)."""

    def __init__(self, dataset: Dataset):
        self.dataset = dataset
        self.units: dict[str, list[Unit]] = {}  # by scope ("" the whole set)
        for unit in dataset.units:
            folder = dataset.document(unit.document).folder
            for scope in {"", folder}:
                self.units.setdefault(scope, []).append(unit)
        self._bm25_units: dict[str, BM25] = {}
        self._bm25_documents: dict[str, tuple[BM25, list[str]]] = {}
        self.vectors: np.ndarray | None = None
        self.row = {unit.key: index for index, unit in enumerate(dataset.units)}

    def _allowed(self, question: Question) -> Callable[[str], bool]:
        candidates = question.candidates
        return (lambda document: True) if candidates is None else candidates.__contains__

    def bm25_units(self, question: Question, query: str) -> list[Found]:
        units = self.units[question.scope]
        if question.scope not in self._bm25_units:
            self._bm25_units[question.scope] = BM25([self.dataset.text_of(unit) for unit in units])
        scores = self._bm25_units[question.scope].scores(query)
        return _best(scores, [u.document for u in units], self._allowed(question), [u.key for u in units])

    def bm25_documents(self, question: Question, query: str) -> list[Found]:
        if question.scope not in self._bm25_documents:
            keys = list(dict.fromkeys(unit.document for unit in self.units[question.scope]))
            index = BM25([self.dataset.document(key).text for key in keys])
            self._bm25_documents[question.scope] = (index, keys)
        index, keys = self._bm25_documents[question.scope]
        return _best(index.scores(query), keys, self._allowed(question), None)

    def embed_units(self) -> float:
        """Every unit's vector, the model cutting long ones as it cuts any text; the seconds taken."""
        model = embedder()
        if model is None:
            return 0.0
        by = system_principal(space_default())
        texts = [self.dataset.text_of(unit) for unit in self.dataset.units]
        started = time.perf_counter()
        batches = [model.embed(texts[i : i + EMBED_BATCH], by=by) for i in range(0, len(texts), EMBED_BATCH)]
        self.vectors = np.concatenate(batches) if batches else np.zeros((0, 0), dtype=np.float32)
        return time.perf_counter() - started

    def dense(self, question: Question, query: np.ndarray | None) -> list[Found]:
        """`query`: the query's vector, as memsite's model gives it."""
        if self.vectors is None or query is None:
            return []
        units = self.units[question.scope]
        rows = np.array([self.row[unit.key] for unit in units])
        cosines = self.vectors[rows] @ query
        scores = {index: float(score) for index, score in enumerate(cosines)}
        return _best(scores, [u.document for u in units], self._allowed(question), [u.key for u in units])


def _best(
    scores: dict[int, float], documents: Sequence[str], allowed: Callable[[str], bool], units: Sequence[str] | None
) -> list[Found]:
    """The DEPTH best of the scored items among the allowed documents, best first (ties: the
    earlier item); each a unit (`units` given) or a whole document."""
    ranked = sorted((i for i in scores if allowed(documents[i])), key=lambda i: (-scores[i], i))[:DEPTH]
    return [Found(documents[i], frozenset({units[i]}) if units is not None else frozenset()) for i in ranked]
