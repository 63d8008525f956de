"""Migration 0023 cuts the nodes already indexed again, a turn each in a dialogue (as 0008 did,
a line each, in its day: both cut with memory.index.passages as it is)."""

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest, old_node

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
    node = old_node(apps, path="Z000", name="session-1", description="Session 1", space_id=space_id, text=TEXT)
    apps.get_model("memory", "Passage").objects.create(
        node=node, seq=1, kind="content", start=0, end=len(TEXT), text=TEXT
    )
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
