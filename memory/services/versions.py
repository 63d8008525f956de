"""What a text document was at each version (`memory.models.NodeVersion`), kept by the
writes that change it, in their transaction: for its history's diffs and restores. Explained
in docs/memory.md."""

from memory.models import Node, NodeContent, NodeVersion
from memory.types import get_type

# A document keeps its last versions only: an agent rewriting a note every minute must not
# fill the database with copies of it.
VERSIONS_KEPT = 100


def version_start(*, node_id: str, version: int) -> None:
    """The row of a document's new newest version: no copy, as the document holds it."""
    NodeVersion.objects.create(node_id=node_id, version=version)


def versions_keep(*, node: Node, version_after: int) -> None:
    """Before a write takes a text document (its row locked, not yet saved) to `version_after`:
    the document as it is now kept in its newest row, a row started for `version_after`, and
    the oldest rows beyond VERSIONS_KEPT let go. Nodes of other types keep nothing."""
    if not get_type(node.type).keeps_versions:
        return
    name, description, description_auto = (
        Node.objects.filter(pk=node.pk).values_list("name", "description", "description_auto").get()
    )
    data = NodeContent.objects.filter(node_id=node.pk).values_list("data", flat=True).first()
    newest = NodeVersion.objects.filter(node_id=node.pk).order_by("-version").first()
    # With no row yet, the document was written before versions were kept: what it is now is
    # known for its version now only.
    since = newest.version if newest is not None and newest.data is None else node.version
    NodeVersion.objects.update_or_create(
        node_id=node.pk,
        version=since,
        defaults={
            "name": name,
            "description": description,
            "description_auto": description_auto,
            "data": bytes(data or b""),
        },
    )
    version_start(node_id=node.pk, version=version_after)
    _let_go_beyond_kept(node.pk)


def _let_go_beyond_kept(node_id: str) -> None:
    rows = NodeVersion.objects.filter(node_id=node_id)
    oldest_kept = list(rows.order_by("-version").values_list("version", flat=True)[VERSIONS_KEPT - 1 : VERSIONS_KEPT])
    if oldest_kept:
        rows.filter(version__lt=oldest_kept[0]).delete()
