"""Each piece of `/api/retrieve/`'s ranking switched off or reweighed in turn, on the very
rankings of the same questions: a piece stays only if the real sets, taken together, are better
with it (docs/retrieval.md, "Two rankings")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memory.index import retrieve as retrieval
from memory.index.fulltext import Scope
from memory.models import Node
from memsite.spaces.principals import Principal

Variant = Callable[[retrieval.Rankings], retrieval.Rankings]
VARIANTS: dict[str, Variant] = {
    "as shipped": lambda ranked: ranked,
    "no full text": lambda ranked: replace(ranked, full_text=[]),
    "no vectors": lambda ranked: replace(ranked, nearest=[]),
    "full text weighs as much as meaning": lambda ranked: replace(ranked, full_text_weight=1.0),
    "full text weighs a quarter": lambda ranked: replace(ranked, full_text_weight=0.25),
    "no time": lambda ranked: replace(ranked, timely=frozenset()),
}


def pieces_off(query: str, *, start: str, k: int, per_node: int | None, by: Principal) -> dict[str, list]:
    """The hits of each variant, as retrieve would give them under node `start`."""
    node = Node.objects.get(pk=start)
    scope = Scope(space_id=node.space_id, path=node.path)
    ranked = retrieval.rankings(query, scope=scope, limit=retrieval.candidates(k, per_node=per_node), by=by)
    return {name: retrieval.hits_of(variant(ranked), query, k, per_node=per_node) for name, variant in VARIANTS.items()}
