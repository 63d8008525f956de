"""The record of node writes: a NodeEvent row for each node a service creates, updates, moves,
writes the content of or deletes, in the write's transaction, with the user who made it."""

from collections.abc import Iterable
from functools import reduce
from operator import or_

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memory.models import Node, NodeEvent
from memory.rows import insert_rows

EVENT_COLUMNS = ("node_id", "action", "user", "version_before", "version_after", "at")
# Branches read a query: SQLite refuses an expression deeper than 1,000 terms.
BRANCHES_A_QUERY = 500
# (node id, version before, version after) of each node a write touched.
Change = tuple[str, int | None, int | None]


def user_id_of(user: AbstractBaseUser | AnonymousUser | None) -> int | None:
    """The id events record for `user`: none for the system's own writes or an anonymous user."""
    return user.pk if user is not None and getattr(user, "is_authenticated", False) else None


def node_events_record(action: str, changes: Iterable[Change], *, user_id: int | None) -> None:
    """One event per change, inserted at once (COPY on PostgreSQL) however many there are."""
    action = NodeEvent.Action(action).value
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = [(node_id, action, user_id, before, after, now) for node_id, before, after in changes]
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
