from django.db.models import QuerySet

from memory.models import Node, NodeEvent
from memsite.errors import NotFound


def node_history(*, node_id: str) -> QuerySet[NodeEvent]:
    """The writes to a node, its deletion included: a deleted node's history stays readable.
    NotFound for an id that no node has, and none ever had."""
    events = NodeEvent.objects.filter(node_id=node_id).select_related("user")
    if "\x00" in node_id or not (Node.objects.filter(pk=node_id).exists() or events.exists()):
        raise NotFound(f"No memory node with id '{node_id}'.")
    return events
