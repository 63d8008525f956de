"""Retrieval reads its candidates back from the table, where deleted passages are gone; a query's
embedding is charged to the space and the user who asked."""

import pytest

from memory import selectors, services
from memory.index import retrieve as retrieve_module
from memory.index.retrieve import retrieve
from memory.index.writes import embed_pending
from memory.models import Node
from memsite.llm.models import LLMCall
from memsite.spaces import services as space_services
from memsite.spaces.models import Space
from tests.factories import DocumentFactory, NodeFactory, acting, system

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
    before = retrieve(by=system(), query=QUERY, k=6)
    assert len(before) == 6 and all(hit.fulltext is None for hit in before)
    gone = {hit.node_id for hit in before} & {doc.pk for doc in docs}
    for node_id in gone:
        services.node_delete(node=Node.objects.get(pk=node_id), by=system())

    after = retrieve(by=system(), query=QUERY, k=3)
    assert len(after) == 3 and not {hit.node_id for hit in after} & gone


# -- the query's embedding is charged to who asked, in the space asked in --------------------------


@pytest.fixture
def server_embeddings(settings, openai_gateway, monkeypatch):
    """Query vectors from the fake server, with a query cache of the test's own."""
    settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr(retrieve_module, "query_cache", {})
    return openai_gateway


@pytest.fixture
def other_space(user) -> Space:
    space = space_services.space_create(user=user, slug="other", name="Other")
    DocumentFactory(parent=selectors.node_internal_folder(space=space, name="swarmstar"), content=b"a greyhound")
    return space


def test_a_query_s_embedding_is_charged_to_the_space_and_the_user_who_asked(server_embeddings, user, other_space):
    retrieve(by=acting(user, other_space), query="greyhound")

    [call] = LLMCall.objects.filter(purpose="embed")
    assert (call.space_id, call.user_id, call.status) == (other_space.pk, user.pk, "ok")


def test_a_cached_query_vector_serves_every_space_without_another_call(server_embeddings, user, other_space):
    first = retrieve(by=acting(user, other_space), query="greyhound")
    again = retrieve(by=acting(user, other_space), query="greyhound")
    retrieve(by=acting(user), query="greyhound")

    assert len(server_embeddings.requests) == 1 and LLMCall.objects.filter(purpose="embed").count() == 1
    assert [hit.score for hit in again] == [hit.score for hit in first]


def test_a_spent_space_budget_leaves_full_text_to_rank(server_embeddings, user, other_space):
    other_space.llm_daily_calls = 1
    other_space.save()
    retrieve(by=acting(user, other_space), query="dog")  # the space's one call today

    hits = retrieve(by=acting(user, other_space), query="greyhound")

    assert len(server_embeddings.requests) == 1 and LLMCall.objects.count() == 1
    assert hits and hits[0].fulltext is not None and all(hit.vector is None for hit in hits)
    retrieve(by=acting(user), query="greyhound")  # another space's budget
    assert len(server_embeddings.requests) == 2
