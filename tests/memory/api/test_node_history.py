"""GET /api/nodes/{id}/history/: a node's writes, newest first, in cursor pages; readable after
the node is deleted."""

import pytest

from memory import services
from tests.factories import DocumentFactory, acting, system
from tests.memory.api.support import url

pytestmark = pytest.mark.django_db


def test_lists_the_writes_newest_first_with_who_made_them(api, user, internal):
    document = DocumentFactory(by=acting(user))
    api.patch(url("node-detail", document), {"description": "Changed"}, format="json")
    response = api.get(url("node-history", document))
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [(r["action"], r["user"], r["version_before"], r["version_after"]) for r in results] == [
        ("update", user.username, 1, 2),
        ("create", user.username, None, 1),
    ]
    assert all(result["at"] for result in results)


def test_pages_follow_the_next_link(api, internal):
    document = DocumentFactory()
    for number in range(3):
        services.node_update(node=document, description=f"Version {number}", by=system())
    seen, link = [], url("node-history", document) + "?page_size=2"
    while link:
        page = api.get(link).json()
        assert len(page["results"]) <= 2
        seen += [result["version_after"] for result in page["results"]]
        link = page["next"]
    assert seen == [4, 3, 2, 1]


def test_a_deleted_node_s_history_stays_readable(api, user, internal):
    document = DocumentFactory(by=acting(user))
    assert api.delete(url("node-detail", document)).status_code == 204
    results = api.get(url("node-history", document.pk)).json()["results"]
    assert [result["action"] for result in results] == ["delete", "create"]


@pytest.mark.parametrize("query", ["?page_size=0", "?page_size=x", "?cursor=bm9wZQ"])
def test_a_bad_page_size_or_cursor_is_a_400(api, internal, query):
    document = DocumentFactory()
    response = api.get(url("node-history", document) + query)
    assert response.status_code == 400, response.content


def test_an_id_no_node_ever_had_is_a_404(api):
    response = api.get(url("node-history", "memory_" + "0" * 32))
    assert response.status_code == 404
    assert "No memory node" in response.json()["detail"]


def test_needs_authentication(client, internal):
    document = DocumentFactory()
    assert client.get(url("node-history", document)).status_code in (401, 403)
