"""Which of a query's passages the memory page's search box lists. `/api/retrieve/` hands a
node its top k whatever they are, for the node to judge; a person scanning a list is better
served by fewer: a passage that no word of the query found is listed only when its meaning is
close to the query and about as close as the best such passage."""

from collections.abc import Sequence
from typing import Protocol, TypeVar

# MiniLM's cosine between unrelated texts is mostly under 0.15, between a question and a
# passage about it mostly over 0.25.
MEANING_FLOOR = 0.2
# How far below the closest passage by meaning another may be and still be listed.
MEANING_SPREAD = 0.1


class Ranked(Protocol):
    @property
    def fulltext(self) -> float | None: ...

    @property
    def vector(self) -> float | None: ...


R = TypeVar("R", bound=Ranked)


def worth_listing(hits: Sequence[R]) -> list[R]:
    """The hits, in order, but those found by their meaning alone that are far from the query."""
    by_meaning_alone = [hit.vector for hit in hits if _by_meaning_alone(hit) and hit.vector is not None]
    floor = max(MEANING_FLOOR, max(by_meaning_alone, default=0.0) - MEANING_SPREAD)
    return [hit for hit in hits if not _by_meaning_alone(hit) or (hit.vector or 0.0) >= floor]


def _by_meaning_alone(hit: Ranked) -> bool:
    return hit.fulltext is None
