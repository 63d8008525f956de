"""Migration 0023 cuts the nodes already indexed again, a turn each in a dialogue (as 0008 did,
a line each, in its day: both cut with memory.index.passages as it is)."""

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest

BEFORE, AFTER = ("memory", "0022_node_versions"), ("memory", "0023_passages_a_turn_each")
TEXT = (
    "Ana: I adopted a greyhound, she is called Pixel, and she sleeps all day.\n"
    "Bo: The weather is supposed to turn tomorrow, bring a coat.\n"
    "Ana: Pixel hates the rain.\n"
    "Bo: So do I."
)


@pytest.mark.django_db(transaction=True)
def test_passages_of_the_old_cut_become_a_turn_each():
    space_id = default_space().pk
    apps = migrate_to(BEFORE)
    Node, NodeContent, Passage = (apps.get_model("memory", name) for name in ("Node", "NodeContent", "Passage"))
    node = Node.objects.create(
        path="Z000",
        depth=1,
        numchild=0,
        type="document",
        is_folder=False,
        name="session-1",
        description="Session 1",
        space_id=space_id,
    )
    NodeContent.objects.create(node=node, data=TEXT.encode(), size=len(TEXT), sha256="0" * 64)
    Passage.objects.create(node=node, seq=0, kind="label", start=0, end=0, text="session-1\nSession 1")
    Passage.objects.create(node=node, seq=1, kind="content", start=0, end=len(TEXT), text=TEXT)
    try:
        apps = migrate_to(AFTER)
        rows = apps.get_model("memory", "Passage").objects.filter(node_id=node.pk).order_by("seq")
        assert [(row.kind, row.text) for row in rows] == [
            ("label", "session-1\nSession 1"),
            *(("content", line) for line in TEXT.split("\n")),
        ]
        assert all(row.vector is None for row in rows)  # to be embedded again by the sweep
    finally:
        apps.get_model("memory", "Node").objects.filter(pk=node.pk).delete()
        migrate_to_latest()
