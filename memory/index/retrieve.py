"""Ranked passages for a query, with no LLM: full text and nearest vectors, fused."""

import datetime
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from memory import selectors
from memory.index import fulltext, times, vectors
from memory.index.expand import Expansion, expanded
from memory.index.fulltext import Scope, query_words
from memory.index.fusion import at_most, distinct_first, fuse
from memory.models import Node, Passage
from memsite.spaces.principals import Principal

logger = logging.getLogger(__name__)
SNIPPET_CHARS = 300
# The longest query and the most passages one retrieval takes, however it is asked for.
MAX_QUERY_CHARS = 2_000
MAX_K = 100
PER_NODE_HELP = (
    "At most this many passages of one node; 1 for the best k nodes, each by its best passage. Absent for no cap."
)


@dataclass(frozen=True)
class Hit:
    passage_id: int
    node_id: str
    path: str  # readable, "/a/b/c"
    tree_path: str  # the node's treebeard path, for grouping hits under a folder's children
    type: str
    name: str
    kind: str  # "label" (name and description) or "content"
    seq: int  # its place among the node's passages (expand.py reads its neighbours by it)
    start: int
    end: int
    text: str
    snippet: str
    score: float  # fused
    fulltext: float | None  # its full-text score, if that ranking found it
    vector: float | None  # its cosine to the query, if that ranking found it
    expanded: Expansion | None = None  # with its neighbours, when asked for (expand.py)
    date: datetime.date | None = None  # the day it speaks of (times.py)


# Query vectors this process has computed, by (model, text): a question asked again, or by the
# walk at every folder, is not embedded again. Emptied when full. A text's vector is the same in
# every space, so spaces share it: only the call that computed it is charged.
query_cache: dict[tuple[str, str], np.ndarray] = {}
QUERIES_KEPT = 512


def query_vectors(queries: Sequence[str], *, by: Principal) -> list[np.ndarray] | None:
    """The queries' embeddings, those not cached computed in one batch, charged to `by` (a
    server's call counts against its budgets); None when embeddings are off or fail, a spent
    budget included (full text alone ranks then)."""
    from memory.index.embeddings import embedder

    model = embedder()
    if model is None:
        return None
    known = {text: vector for text in queries if (vector := query_cache.get((model.name, text))) is not None}
    missing = [text for text in dict.fromkeys(queries) if text not in known]
    if missing:
        try:
            embedded = model.embed(missing, by=by)
            known.update(zip(missing, embedded, strict=True))
        except Exception as exc:  # a server that is down, or a spent budget, must not take retrieval with it
            logger.warning("The query was not embedded, so only full text ranks it: %s", exc)
            return None
        if len(query_cache) + len(missing) > QUERIES_KEPT:
            query_cache.clear()
        query_cache.update({(model.name, text): known[text] for text in missing})
    return [known[text] for text in queries]


def snippet(text: str, query: str) -> str:
    """Up to SNIPPET_CHARS of the passage, around the first query word it holds."""
    if len(text) <= SNIPPET_CHARS:
        return text
    lowered = text.lower()
    found = [lowered.find(word) for word in query_words(query)]
    first = min((at for at in found if at >= 0), default=0)
    start = max(0, min(first - SNIPPET_CHARS // 3, len(text) - SNIPPET_CHARS))
    start = text.rfind(" ", 0, start) + 1 if start else 0
    piece = text[start : start + SNIPPET_CHARS].rsplit(" ", 1)[0] if start + SNIPPET_CHARS < len(text) else text[start:]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(text) else "")


# Full text weighs half what meaning does: on the real sets taken together, a tuned 922 questions
# found 2 points more in their top five than with both at one, and the 238 untouched ones 4
# (docs/retrieval.md, "Fusion").
FULL_TEXT_WEIGHT = 0.5


@dataclass(frozen=True)
class Rankings:
    """A query's two rankings, each (passage id, score) best first."""

    full_text: list[tuple[int, float]]
    nearest: list[tuple[int, float]]
    timely: frozenset[int] = frozenset()  # those the question's time favours (times.timely)
    full_text_weight: float = FULL_TEXT_WEIGHT

    def fused(self) -> list[tuple[int, float]]:
        ranked = [[pk for pk, _ in ranking] for ranking in (self.full_text, self.nearest)]
        return times.boosted(fuse(ranked, weights=[self.full_text_weight, 1.0]), self.timely)


def rankings(query: str, *, scope: Scope, limit: int, by: Principal) -> Rankings:
    """Full text and nearest vectors, each `limit` long at most; the query is embedded for `by`."""
    full_text = fulltext.rank(query, scope=scope, limit=limit)
    embedded = query_vectors([query], by=by)
    nearest = [] if embedded is None else vectors.rank(embedded[0], scope=scope, limit=limit)
    candidates = [pk for ranking in (full_text, nearest) for pk, _ in ranking]
    return Rankings(full_text, nearest, timely=times.timely(query, scope=scope, candidates=candidates))


def retrieve(
    *,
    query: str,
    by: Principal,
    start: Node | None = None,
    k: int = 10,
    types: Sequence[str] = (),
    per_node: int | None = None,
    expand_tokens: int | None = None,
    after: datetime.date | None = None,
    before: datetime.date | None = None,
) -> list[Hit]:
    """The `k` best passages for `query` in `by`'s space, in `start`'s subtree (the space's
    whole tree when None), at most `per_node` of any one node (no cap when None): with 1, the
    `k` best nodes, each by its best passage; each content hit with its neighbours within
    `expand_tokens` tokens, if given (expand.py); only those dated from `after` to `before`
    (both included) when either is given. The query's embedding is charged to `by`."""
    times.window_check(after, before)
    scope = Scope(
        space_id=by.space.pk,
        path=start.path if start is not None else None,
        types=tuple(types),
        after=after,
        before=before,
    )
    ranked = rankings(query, scope=scope, limit=candidates(k, per_node=per_node), by=by)
    return expanded(hits_of(ranked, query, k, per_node=per_node), tokens=expand_tokens)


PER_NODE_DEPTH = 10
MAX_CANDIDATES = 1_000


def candidates(k: int, *, per_node: int | None) -> int:
    """How deep each ranking is read for k hits: a node of many passages fills a ranking's
    head, so a cap on them looks deeper for k nodes."""
    depth = k if per_node is None else k * max(1, PER_NODE_DEPTH // per_node)
    return min(max(depth, settings.MEMSITE_INDEX_CANDIDATES), MAX_CANDIDATES)


def hits_of(ranked: Rankings, query: str, k: int, *, per_node: int | None) -> list[Hit]:
    """The `k` best fused passages still in the table, best first, a text said word for word in
    several places once before its repeats ("Elif: Tell me more!" in thirty sessions tells none
    of them apart), at most `per_node` of a node. The first 2k candidates are read back, the
    rest only if too few of those are left: the vector matrix keeps passages deleted since its
    last reload, and they are gone here."""
    fused = ranked.fused()
    live: list[tuple[int, float, Passage]] = []
    chosen: list[tuple[int, float, Passage]] = []
    for window in (fused[: k * 2], fused[k * 2 :]):
        if not window:
            break
        rows = _passages([pk for pk, _ in window])
        live += [(pk, score, rows[pk]) for pk, score in window if pk in rows]
        distinct = distinct_first(live, key=lambda item: item[2].text)
        chosen = at_most(distinct, each=per_node, key=lambda item: item[2].node_id)
        if len({row.text for _, _, row in chosen}) >= k:
            break
    chosen = chosen[:k]
    paths = selectors.node_paths(nodes={row.node_id: row.node for _, _, row in chosen}.values())
    words, nearest = dict(ranked.full_text), dict(ranked.nearest)
    return [
        Hit(
            passage_id=pk,
            node_id=row.node_id,
            path=paths[row.node_id],
            tree_path=row.node.path,
            type=row.node.type,
            name=row.node.name,
            kind=row.kind,
            seq=row.seq,
            start=row.start,
            end=row.end,
            text=row.text,
            snippet=snippet(row.text, query),
            score=round(score, 6),
            fulltext=words.get(pk),
            vector=nearest.get(pk),
            date=row.date,
        )
        for pk, score, row in chosen
    ]


def _passages(ids: list[int]) -> dict[int, Passage]:
    rows = (
        Passage.objects.filter(pk__in=ids)
        .select_related("node")
        .only("seq", "kind", "start", "end", "text", "date", "node__path", "node__name", "node__type", "node__depth")
    )
    return {row.pk: row for row in rows}


def best_by_node(hits: Iterable[Hit], *, limit: int, kind: str | None = None) -> dict[str, list[Hit]]:
    """The hits (of `kind` alone, when given) of the first `limit` nodes hit, by node in the order
    of each node's best hit; a node's hits best first."""
    nodes: dict[str, list[Hit]] = {}
    for hit in hits:
        if (kind is None or hit.kind == kind) and (hit.node_id in nodes or len(nodes) < limit):
            nodes.setdefault(hit.node_id, []).append(hit)
    return nodes
