"""The record of node writes: a NodeEvent row for each node a service creates, updates, moves,
writes the content of, restores or deletes, in the write's transaction, with the user who made
it, the token it was made with, if one, and the space it was made in."""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.models import Node, NodeEvent
from memory.rows import insert_rows
from memsite.spaces.principals import Principal

EVENT_COLUMNS = (
    "node_id",
    "space",
    "action",
    "user",
    "token",
    "version_before",
    "version_after",
    "restored_from",
    "at",
)
# Branches read a query: SQLite refuses an expression deeper than 1,000 terms.
BRANCHES_A_QUERY = 500
# (node id, version before, version after) of each node a write touched.
Change = tuple[str, int | None, int | None]


@dataclass(frozen=True)
class Author:
    """Who the events of a write name, and the space it was made in."""

    space_id: int
    user_id: int | None
    token_id: int | None

    def row(
        self,
        node_id: str,
        action: str,
        before: int | None,
        after: int | None,
        at: object,
        restored_from: int | None = None,
    ) -> tuple:
        """An event row in EVENT_COLUMNS' order."""
        return (node_id, self.space_id, action, self.user_id, self.token_id, before, after, restored_from, at)


def author_of(*, by: Principal) -> Author:
    """Who a write of `by` is recorded as: its user (none for memsite's own) and its token, in
    its space."""
    return Author(space_id=by.space.pk, user_id=by.user_id, token_id=by.token_id)


def node_events_record(
    action: str, changes: Iterable[Change], *, author: Author, restored_from: int | None = None
) -> None:
    """One event per change, inserted at once (COPY on PostgreSQL) however many there are; a
    restore's names the version it brought back."""
    action = NodeEvent.Action(action).value
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = [author.row(pk, action, before, after, now, restored_from) for pk, before, after in changes]
    insert_rows(NodeEvent, EVENT_COLUMNS, rows)


def branch_versions(node_ids: Iterable[str]) -> list[tuple[str, int]]:
    """The id and version of each node in these nodes' branches, themselves included: what a
    delete of them removes."""
    paths = list(Node.objects.filter(pk__in=list(node_ids)).values_list("path", flat=True))
    versions: list[tuple[str, int]] = []
    for start in range(0, len(paths), BRANCHES_A_QUERY):
        chunk = paths[start : start + BRANCHES_A_QUERY]
        branches = reduce(or_, (Q(path__startswith=path) for path in chunk))
        versions += Node.objects.filter(branches).values_list("pk", "version")
    return versions


def deletions(node_ids: Iterable[str]) -> list[Change]:
    """The changes of deleting these nodes' branches, read before the delete."""
    return [(node_id, version, None) for node_id, version in branch_versions(node_ids)]
