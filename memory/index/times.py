"""Time in retrieval: the window of days a caller gives (`after`, `before`), which keeps only the
passages dated in it, and the boost of the passages in the time a question names ("in May
2023", "last week"), or saying a time when it asks when. Explained in docs/retrieval.md ("Time")."""

from collections.abc import Iterable, Sequence
from datetime import date
from functools import reduce
from operator import or_

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.index.fulltext import Scope, scope_sql
from memory.index.writes import chunks
from memory.logic.asked_time import Window, asks_when, named_times, names_time, windows
from memory.models import Passage
from memsite.errors import InvalidInput

AFTER_HELP = (
    "Only passages dated on or after this day (ISO 8601, such as 2023-05-08; the day itself included). A passage's "
    "date is the last dated line's above it in its node's text, else its node's date. With `after` or `before`, "
    "passages with no date are left out."
)
BEFORE_HELP = "Only passages dated on or before this day (ISO 8601; the day itself included)."
# A passage in the time the question names (or, for a question asking when, one saying a time)
# has its fused score raised by this share of it: enough to lead the passages as well found as
# itself, too little to raise a weak match over a strong one, since the question's time may be
# misread ("May" the verb, a "last week" the memory's newest date does not anchor). 0 turns it off.
TIME_BOOST = 0.5


def window_check(after: date | None, before: date | None) -> None:
    if after is not None and before is not None and after > before:
        raise InvalidInput(
            f"`after` ({after}) is later than `before` ({before}): no day is in that window.",
            data={"before": ["Must be on or after `after`."]},
        )


def reference_date(scope: Scope) -> date:
    """What a question's "yesterday" or "last week" counts from: the newest date of a passage in
    the scope that is not after today, or today when none is. Memory is often an archive (last
    year's sessions, an imported log): its newest day is the asker's "now" in it, and today would
    name days nothing in it speaks of. Where memory is kept up to date, the two are the same."""
    today = timezone.localdate()
    where, params = scope_sql(scope)
    sql = (
        "SELECT p.date FROM memory_passage p JOIN memory_node n ON n.id = p.node_id "
        f"WHERE p.date IS NOT NULL AND p.date <= %s{where} ORDER BY p.date DESC LIMIT 1"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [today, *params])
        row = cursor.fetchone()
    if row is None:
        return today
    return row[0] if isinstance(row[0], date) else date.fromisoformat(row[0])  # SQLite gives text


def timely(query: str, *, scope: Scope, candidates: Iterable[int]) -> frozenset[int]:
    """Of the candidates, those the question's time favours: dated in a time it names, or, when
    it names none and asks when, saying a time. None of them when the caller gave a window: it
    filters already, and what the question names is not read over what the caller said."""
    if scope.dated:
        return frozenset()
    ids = list(dict.fromkeys(candidates))
    named = named_times(query)
    if named:
        reference = reference_date(scope) if any(time.relative for time in named) else timezone.localdate()
        found = windows(query, reference)
        return frozenset(_dated_within(ids, found)) if found else frozenset()
    if asks_when(query):
        return frozenset(_saying_time(ids))
    return frozenset()


def _dated_within(ids: list[int], found: Sequence[Window]) -> list[int]:
    inside = reduce(or_, (Q(date__range=(window.first, window.last)) for window in found))
    return [
        pk for chunk in chunks(ids) for pk in Passage.objects.filter(inside, pk__in=chunk).values_list("pk", flat=True)
    ]


def _saying_time(ids: list[int]) -> list[int]:
    rows = (Passage.objects.filter(pk__in=chunk).values_list("pk", "text") for chunk in chunks(ids))
    return [pk for chunk in rows for pk, text in chunk if names_time(text)]


def boosted(fused: list[tuple[int, float]], favoured: frozenset[int]) -> list[tuple[int, float]]:
    """The fused ranking with the favoured passages' scores raised by TIME_BOOST of themselves,
    best first (ties in their order before)."""
    if not favoured or not TIME_BOOST:
        return fused
    raised = [(pk, score * (1 + TIME_BOOST) if pk in favoured else score) for pk, score in fused]
    return sorted(raised, key=lambda pair: -pair[1])
