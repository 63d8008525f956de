"""Retrieval reads its candidates back from the table, where deleted passages are gone."""

import pytest

from memory import services
from memory.index.retrieve import retrieve
from memory.index.writes import embed_pending
from memory.models import Node
from tests.factories import DocumentFactory, NodeFactory, default_space

pytestmark = pytest.mark.django_db
QUERY = "Which dog did they get?"


def test_k_live_hits_come_back_while_the_vector_matrix_still_holds_deleted_passages(settings):
    settings.MEMSITE_EMBEDDINGS = "local"
    settings.MEMSITE_INDEX_RELOAD_S = 3_600  # the matrix the first ranking loads is kept
    folder = NodeFactory(name="kennel", description="")
    docs = [
        DocumentFactory(
            parent=folder,
            name=f"note-{number}",
            description="",
            content=f"Bo: we adopted a puppy, number {number}.".encode(),
        )
        for number in range(10)
    ]
    embed_pending()
    # No word of the query is in the index: the vectors alone rank, and the whole tree is
    # ranked from the matrix, which keeps every passage it loaded until it is read again.
    before = retrieve(space_id=default_space().pk, query=QUERY, k=6)
    assert len(before) == 6 and all(hit.fulltext is None for hit in before)
    gone = {hit.node_id for hit in before} & {doc.pk for doc in docs}
    for node_id in gone:
        services.node_delete(node=Node.objects.get(pk=node_id), user=None)

    after = retrieve(space_id=default_space().pk, query=QUERY, k=3)
    assert len(after) == 3 and not {hit.node_id for hit in after} & gone
