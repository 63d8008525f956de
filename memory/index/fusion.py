"""Reciprocal-rank fusion (pure): each ranking adds weight / (K + rank) to the items it ranked,
so an item found by one ranking alone stays a candidate, behind those found by more; the
repeats of an item put behind the distinct ones; and at most so many items of one group."""

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

# Below the usual 60: at 60 the gap between a ranking's first and its fiftieth item is small,
# and a passage that full text ranked first for a common word outranked the best match by
# meaning (benchmarks/retrieval.py compares the two).
K = 10
T = TypeVar("T")
Item = TypeVar("Item", bound=Hashable)


def fuse(rankings: Sequence[Sequence[Item]], weights: Sequence[float] | None = None) -> list[tuple[Item, float]]:
    """Items of every ranking by fused score, best first; ties keep the first ranking's order."""
    scores: dict[Item, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (K + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def distinct_first(items: Sequence[T], *, key: Callable[[T], Hashable]) -> list[T]:
    """The items whose key is new, in order, then those repeating an earlier key, in order."""
    seen: set[Hashable] = set()
    first: list[T] = []
    repeats: list[T] = []
    for item in items:
        (repeats if key(item) in seen else first).append(item)
        seen.add(key(item))
    return first + repeats


def at_most(items: Sequence[T], *, each: int | None, key: Callable[[T], Hashable]) -> list[T]:
    """The items in order, but no more than `each` of those sharing a key (all of them when
    None)."""
    if each is None:
        return list(items)
    taken: Counter[Hashable] = Counter()
    kept: list[T] = []
    for item in items:
        if taken[key(item)] < each:
            taken[key(item)] += 1
            kept.append(item)
    return kept
