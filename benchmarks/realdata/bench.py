"""The run, once Django is set up on the scratch database: each set written through the API as a
swarm node writes, its passages embedded, every question asked of `/api/retrieve/` and of the
baselines, and the offline searches run on a sample."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from benchmarks.measures.retrieval import embedding_here
from benchmarks.realdata import ablation
from benchmarks.realdata.baselines import Baselines
from benchmarks.realdata.measures import Found, Units, gold_documents, tail
from benchmarks.realdata.node import SwarmNode, Written, write
from benchmarks.realdata.shape import Dataset, Question, sample
from memory.index import retrieve as retrieval
from memory.index.embeddings import embedder
from memory.index.writes import embed_pending
from memory.models import Passage
from memory.services.searches import MAX_QUESTION_CHARS
from memsite.llm.tokens import offline_counter
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default

WARMUP = 5  # untimed retrieve calls first in each set: lazy imports, the vector matrix, caches
DEPTH = 10
# "retrieve nodes" asks for the best nodes (`per_node: 1`), as a node that wants sessions or files
# does; "retrieve" asks for passages.
METHODS = ("retrieve", "retrieve nodes", "BM25 units", "BM25 documents", "dense units")


@dataclass(frozen=True)
class SearchRun:
    documents: list[str]  # of the nodes it returned, those among the question's candidates
    answer: str
    llm_calls: int
    tokens: int
    wall_ms: float
    ended: str


@dataclass
class Asked:
    question: Question
    gold_documents: tuple[str, ...]
    rankings: dict[str, list[Found]]  # by METHODS, best first
    best: dict[str, str]  # by method, the text of its first item
    retrieve_ms: float
    tokens: dict[int, int]  # of retrieve's first k hits' snippets, by k
    one_prompt: int  # a prompt holding the question and every candidate document
    searches: dict[str, SearchRun] = field(default_factory=dict)  # by output
    # retrieve as a node wanting the set's unit asks, with each piece of its ranking off in turn
    pieces_off: dict[str, list[Found]] = field(default_factory=dict)


@dataclass
class SetRun:
    dataset: Dataset
    written: Written
    passages: int
    embedded: int
    embed_seconds: float
    dense_seconds: float
    asked: list[Asked]


def measure_set(node: SwarmNode, dataset: Dataset, *, searches: int) -> SetRun:
    say = f"{dataset.name}:"
    print(f"{say} writing {len(dataset.documents):,} documents", file=sys.stderr)
    before = Passage.objects.count()
    with embedding_here():
        written = write(node, dataset)
    passages = Passage.objects.count() - before
    print(f"{say} {written.nodes:,} nodes in {written.seconds:.0f} s; embedding {passages:,} passages", file=sys.stderr)
    started = time.perf_counter()
    embedded = embed_pending()
    embed_seconds = time.perf_counter() - started
    baselines = Baselines(dataset)
    print(f"{say} embedding {len(dataset.units):,} units for the dense baseline", file=sys.stderr)
    dense_seconds = baselines.embed_units()
    print(f"{say} {len(dataset.questions)} questions", file=sys.stderr)
    asker = Asker(node, dataset, written, baselines)
    for question in dataset.questions[:WARMUP]:
        node.retrieve(tail(question.text, retrieval.MAX_QUERY_CHARS), k=DEPTH, start=written.scope(question.scope))
    asked = [asker.ask(question) for question in dataset.questions]
    chosen = {q.key for q in sample(dataset.name, dataset.questions, searches)}
    print(f"{say} {len(chosen)} offline searches", file=sys.stderr)
    for outcome in asked:
        if outcome.question.key in chosen:
            asker.search(outcome)
    return SetRun(dataset, written, passages, embedded, embed_seconds, dense_seconds, asked)


class Asker:
    def __init__(self, node: SwarmNode, dataset: Dataset, written: Written, baselines: Baselines):
        self.node, self.dataset, self.written, self.baselines = node, dataset, written, baselines
        self.units = Units(dataset.units)
        self.unit_of = {unit.key: unit for unit in dataset.units}
        self.counter = offline_counter()
        self.document_tokens = {d.key: self.counter.count(d.text) for d in dataset.documents}
        self.model = embedder()
        self.by = system_principal(space_default())

    def candidates(self, question: Question) -> list[str]:
        inside = [key for key in self.document_tokens if not question.scope or key.startswith(question.scope + "/")]
        return inside if question.candidates is None else [key for key in inside if key in question.candidates]

    def ask(self, question: Question) -> Asked:
        query = tail(question.text, retrieval.MAX_QUERY_CHARS)
        found, hits, millis = self.retrieve(question, query)
        nodes, _, _ = self.retrieve(question, query, per_node=1)
        vector = self.model.embed([query], by=self.by)[0] if self.model else None
        rankings = {
            "retrieve": found,
            "retrieve nodes": nodes,
            "BM25 units": self.baselines.bm25_units(question, query),
            "BM25 documents": self.baselines.bm25_documents(question, query),
            "dense units": self.baselines.dense(question, vector),
        }
        best = {method: self.text_of(ranking[0]) for method, ranking in rankings.items() if ranking}
        if hits:  # retrieve's best is its passage, not the units it touches
            best["retrieve"] = self.passage_text(hits[0])
        return Asked(
            question=question,
            gold_documents=gold_documents(question, self.unit_of),
            rankings=rankings,
            best=best,
            retrieve_ms=millis,
            tokens={k: sum(self.counter.count(hit["snippet"]) for hit in hits[:k]) for k in (5, 10)},
            one_prompt=self.counter.count(query) + sum(self.document_tokens[k] for k in self.candidates(question)),
            pieces_off=self.pieces_off(question, query),
        )

    def retrieve(
        self, question: Question, query: str, *, per_node: int | None = None
    ) -> tuple[list[Found], list[dict], float]:
        """Its hits in the question's scope; where the set restricts candidates, as many as the API
        gives, those outside left out, the first ten kept. Timed from the request to the answer,
        the query embedded afresh as a new query would be."""
        k = DEPTH if question.candidates is None else retrieval.MAX_K
        retrieval.query_cache.clear()
        started = time.perf_counter()
        hits = self.node.retrieve(query, k=k, start=self.written.scope(question.scope), per_node=per_node)
        millis = (time.perf_counter() - started) * 1000
        kept = []
        for hit in hits:
            document = self.written.document_of(hit["path"]) or hit["path"]
            if question.candidates is None or document in question.candidates:
                kept.append((hit, document))
        kept = kept[:DEPTH]
        found = [Found(document, self.covered(hit, document)) for hit, document in kept]
        return found, [hit for hit, _ in kept], millis

    def pieces_off(self, question: Question, query: str) -> dict[str, list[Found]]:
        k = DEPTH if question.candidates is None else retrieval.MAX_K
        per_node = 1 if self.dataset.whole_documents else None
        variants = ablation.pieces_off(
            query, start=self.written.scope(question.scope), k=k, per_node=per_node, by=self.by
        )
        rankings = {}
        for name, hits in variants.items():
            kept = [
                (hit, document)
                for hit in hits
                if (document := self.written.document_of(hit.path) or hit.path) in (question.candidates or {document})
            ]
            rankings[name] = [
                Found(document, self.covered({"kind": hit.kind, "start": hit.start, "end": hit.end}, document))
                for hit, document in kept[:DEPTH]
            ]
        return rankings

    def covered(self, hit: dict, document: str) -> frozenset[str]:
        # A label passage's offsets are in the node's name and description, not in its text.
        return self.units.overlapping(document, hit["start"], hit["end"]) if hit["kind"] == "content" else frozenset()

    def passage_text(self, hit: dict) -> str:
        document = self.written.document_of(hit["path"])
        if hit["kind"] != "content" or document not in self.document_tokens:
            return hit["snippet"]
        return self.dataset.document(document).text[hit["start"] : hit["end"]]

    def text_of(self, found: Found) -> str:
        if found.units:
            return self.dataset.text_of(self.unit_of[next(iter(found.units))])
        return self.dataset.document(found.document).text if found.document in self.document_tokens else ""

    def search(self, outcome: Asked) -> None:
        question = outcome.question
        outputs = ("node", "answer") if question.accepted else ("node",)
        for output in outputs:
            started = time.perf_counter()
            data = self.node.search(
                tail(question.text, MAX_QUESTION_CHARS), start=self.written.scope(question.scope), output=output
            )
            wall = (time.perf_counter() - started) * 1000
            result = data.get("result") or {}
            documents = [self.written.document_of(node["path"]) or node["path"] for node in result.get("nodes", [])]
            spent = data["spent"]
            outcome.searches[output] = SearchRun(
                documents=[d for d in documents if question.candidates is None or d in question.candidates],
                answer=" ".join(answer.get("answer") or "" for answer in result.get("answers", [])).strip(),
                llm_calls=spent["llm_calls"],
                tokens=spent["prompt_tokens"] + spent["completion_tokens"],
                wall_ms=wall,
                ended=(data.get("ended_because") or data["status"]).split(":")[0],
            )


def run_all(datasets: list[Dataset], *, searches: int) -> list[SetRun]:
    node = SwarmNode()
    return [measure_set(node, dataset, searches=searches) for dataset in datasets]
