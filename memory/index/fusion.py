"""Reciprocal-rank fusion (pure): each ranking adds 1 / (K + rank) to the items it ranked, so
an item found by one ranking alone stays a candidate, behind those found by both."""

from collections.abc import Hashable, Sequence

K = 60  # the usual constant: it damps the gap between the first few ranks


def fuse(rankings: Sequence[Sequence[Hashable]]) -> list[tuple[Hashable, float]]:
    """Items of every ranking by fused score, best first; ties keep the first ranking's order."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (K + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])
