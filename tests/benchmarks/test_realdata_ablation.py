"""The real-data benchmark's pieces-off variants: the same rankings, a piece of them off."""

import pytest

from benchmarks.realdata.ablation import VARIANTS, pieces_off
from memsite.spaces.principals import system_principal
from tests.factories import DocumentFactory, NodeFactory, default_space

pytestmark = pytest.mark.django_db


def test_each_variant_ranks_under_the_start_node_with_its_piece_off(settings):
    settings.MEMSITE_EMBEDDINGS = "off"  # full text alone: with it off, nothing is left
    folder, elsewhere = NodeFactory(), NodeFactory()
    inside = DocumentFactory(parent=folder, content=b"a pelican at the pier")
    DocumentFactory(parent=elsewhere, content=b"a pelican again")

    found = pieces_off("pelican", start=folder.pk, k=5, per_node=None, by=system_principal(default_space()))

    assert set(found) == set(VARIANTS)
    assert [hit.node_id for hit in found["as shipped"]] == [inside.pk]
    assert found["no full text"] == []
    assert all(hit.node_id == inside.pk for hits in found.values() for hit in hits)  # none leaves the start node
