"""Reads of the content index's passages."""

from collections.abc import Collection

from django.db.models import Count

from memory.models import Passage


def passage_text(*, node_id: str, start: int, end: int) -> str | None:
    """The text of the node's content passage at these character offsets (a search result links
    to one by them); None when there is no such passage, as after the content changed."""
    return (
        Passage.objects.filter(node_id=node_id, kind=Passage.Kind.CONTENT, start=start, end=end)
        .values_list("text", flat=True)
        .first()
    )


def content_passage_counts(*, node_ids: Collection[str]) -> dict[str, int]:
    """How many content passages each of these nodes has (those with none are left out)."""
    rows = (
        Passage.objects.filter(node_id__in=list(node_ids), kind=Passage.Kind.CONTENT)
        .values("node_id")
        .annotate(count=Count("id"))
        .values_list("node_id", "count")
    )
    return dict(rows)
