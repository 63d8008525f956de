"""Reads of the content index's passages."""

from memory.models import Passage


def passage_text(*, node_id: str, start: int, end: int) -> str | None:
    """The text of the node's content passage at these character offsets (a search result links
    to one by them); None when there is no such passage, as after the content changed."""
    return (
        Passage.objects.filter(node_id=node_id, kind=Passage.Kind.CONTENT, start=start, end=end)
        .values_list("text", flat=True)
        .first()
    )
