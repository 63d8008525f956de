"""Migration 0024 dates the passages already indexed, as the writes date new ones."""

from datetime import date

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest

BEFORE, AFTER = ("memory", "0023_passages_a_turn_each"), ("memory", "0024_dates")
TEXT = "Ana: the first call, about the move to Porto.\n[2023-05-09 14:02] Bo: the second, a day later."


@pytest.mark.django_db(transaction=True)
def test_passages_already_indexed_are_dated_by_the_description_and_the_dated_lines():
    space_id = default_space().pk
    apps = migrate_to(BEFORE)
    Node, NodeContent, Passage = (apps.get_model("memory", name) for name in ("Node", "NodeContent", "Passage"))
    session = Node.objects.create(
        path="Z000",
        depth=1,
        numchild=0,
        type="document",
        is_folder=False,
        name="s",
        description="Call of 8 May 2023",
        space_id=space_id,
    )
    NodeContent.objects.create(node=session, data=TEXT.encode(), size=len(TEXT), sha256="0" * 64)
    Passage.objects.create(node=session, seq=0, kind="label", start=0, end=0, text="s\nCall of 8 May 2023")
    for seq, line in enumerate(TEXT.split("\n"), start=1):
        Passage.objects.create(node=session, seq=seq, kind="content", start=TEXT.index(line), end=0, text=line)
    undated = Node.objects.create(
        path="Z001",
        depth=1,
        numchild=0,
        type="folder",
        is_folder=True,
        name="u",
        description="Nothing dated",
        space_id=space_id,
    )
    Passage.objects.create(node=undated, seq=0, kind="label", start=0, end=0, text="u\nNothing dated")
    try:
        apps = migrate_to(AFTER)
        Passage = apps.get_model("memory", "Passage")
        assert list(Passage.objects.filter(node_id=session.pk).order_by("seq").values_list("date", flat=True)) == [
            date(2023, 5, 8),
            date(2023, 5, 8),
            date(2023, 5, 9),
        ]
        assert Passage.objects.get(node_id=undated.pk).date is None
        assert apps.get_model("memory", "Node").objects.get(pk=session.pk).date is None  # none was given
    finally:
        apps.get_model("memory", "Node").objects.filter(pk__in=[session.pk, undated.pk]).delete()
        migrate_to_latest()
