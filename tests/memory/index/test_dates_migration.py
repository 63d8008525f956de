"""Migration 0024 dates the passages already indexed, as the writes date new ones."""

from datetime import date

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest, old_node

BEFORE, AFTER = ("memory", "0023_passages_a_turn_each"), ("memory", "0024_dates")
TEXT = "Ana: the first call, about the move to Porto.\n[2023-05-09 14:02] Bo: the second, a day later."


@pytest.mark.django_db(transaction=True)
def test_passages_already_indexed_are_dated_by_the_description_and_the_dated_lines():
    space_id = default_space().pk
    apps = migrate_to(BEFORE)
    session = old_node(apps, path="Z000", name="s", description="Call of 8 May 2023", space_id=space_id, text=TEXT)
    Passage = apps.get_model("memory", "Passage")
    for seq, line in enumerate(TEXT.split("\n"), start=1):
        Passage.objects.create(node=session, seq=seq, kind="content", start=TEXT.index(line), end=0, text=line)
    undated = old_node(apps, path="Z001", name="u", description="Nothing dated", space_id=space_id)
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
