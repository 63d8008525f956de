"""Helpers shared by the API tests."""

from django.urls import reverse

from memory.models import Node, NodeContent


def url(name: str, node: Node | str | None = None) -> str:
    if node is None:
        return reverse(f"memory-api:{name}")
    return reverse(f"memory-api:{name}", kwargs={"node_id": getattr(node, "pk", node)})


def tree_state() -> tuple[list[dict], list[tuple[str, str]]]:
    """Every node's fields and every content's digest: equal before and after means nothing changed."""
    nodes = list(Node.objects.order_by("path").values())
    contents = list(NodeContent.objects.order_by("node_id").values_list("node_id", "sha256"))
    return nodes, contents
