from django.db.models import QuerySet

from memory.models import Node, NodeEvent
from memsite.errors import NotFound
from memsite.spaces.models import Space


def node_history(*, space: Space, node_id: str, before: int | None = None) -> QuerySet[NodeEvent]:
    """The writes to a node of the space, its deletion included: a deleted node's history stays
    readable. NotFound for an id that no node of the space has, and none ever had. With
    `before`, only the events older than that one (a page of a listing)."""
    events = NodeEvent.objects.filter(node_id=node_id, space=space).select_related("user", "token")
    if "\x00" in node_id or not (Node.objects.filter(pk=node_id, space=space).exists() or events.exists()):
        raise NotFound(f"No memory node with id '{node_id}'.")
    return events.filter(id__lt=before) if before is not None else events
