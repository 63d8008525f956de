import re
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import selectors, services
from memory.models import Node
from memsite.spaces.models import ApiToken, Membership
from tests.factories import DocumentFactory, NodeFactory, UserFactory, acting, default_space, system
from tests.memory.api.support import url

pytestmark = pytest.mark.django_db


def test_roots_are_the_internal_folders(api, internal):
    response = api.get(url("node-roots"))
    assert response.status_code == 200
    roots = response.json()
    assert {root["name"] for root in roots} == {"swarmstar", "user", "projects", "references"}
    for root in roots:
        assert root["type"] == "internal_folder" and root["is_folder"] is True
        assert root["parent"] is None and root["path"] == f"/{root['name']}"
        assert root["child_count"] == Node.objects.get(pk=root["id"]).numchild
        assert "children_ids" not in root


def test_detail_has_every_field_of_seed_000_and_more(api, user, internal):
    folder = NodeFactory(name="logs", by=acting(user))
    children = [NodeFactory(parent=folder, name=name) for name in ("zeta", "alpha", "mid")]
    response = api.get(url("node-detail", folder))
    assert response.status_code == 200
    body = response.json()
    assert body["children_ids"] == [child.id for child in children]
    assert body["child_count"] == 3
    assert body["parent"] == internal["swarmstar"].id
    assert body["path"] == "/swarmstar/logs"
    assert body["created_by"] == user.username
    assert body["is_folder"] is True and body["context"] == {} and body["content_size"] is None
    assert response["ETag"] == f'"{body["version"]}"'


def test_detail_of_a_document_reports_its_content_size(api, internal):
    document = DocumentFactory(parent=internal["user"], name="notes.md", content=b"12345")
    body = api.get(url("node-detail", document)).json()
    assert (body["type"], body["is_folder"], body["content_size"]) == ("document", False, 5)
    assert body["path"] == "/user/notes.md" and body["created_by"] is None


def test_detail_of_an_unknown_id_is_a_404(api, internal):
    response = api.get(url("node-detail", "memory_" + "a" * 32))
    assert response.status_code == 404
    assert response.json() == {"detail": f"No memory node with id 'memory_{'a' * 32}'."}


class TestChildren:
    def test_lists_children_in_order_with_their_paths(self, api, internal):
        folder = NodeFactory(name="logs")
        names = ["b", "a", "c"]
        for name in names:
            NodeFactory(parent=folder, name=name)
        response = api.get(url("node-children", folder))
        assert response.status_code == 200
        page = response.json()
        assert [item["name"] for item in page["results"]] == names
        assert [item["path"] for item in page["results"]] == [f"/swarmstar/logs/{name}" for name in names]
        assert page["next"] is None and page["previous"] is None

    def test_pages_follow_next_links_to_the_end(self, api, internal):
        folder = NodeFactory(name="logs")
        ids = [NodeFactory(parent=folder, name=f"n{index:02}").id for index in range(7)]
        seen, link, pages = [], url("node-children", folder) + "?page_size=3", 0
        while link:
            page = api.get(link).json()
            seen += [item["id"] for item in page["results"]]
            link, pages = page["next"], pages + 1
        assert seen == ids and pages == 3

    def test_default_page_size_comes_from_settings(self, api, internal, settings):
        settings.MEMSITE_CHILDREN_PAGE_SIZE = 2
        folder = NodeFactory(name="logs")
        for index in range(3):
            NodeFactory(parent=folder, name=f"n{index}")
        page = api.get(url("node-children", folder)).json()
        assert len(page["results"]) == 2 and page["next"]

    @pytest.mark.parametrize("page_size", ["0", "-1", "abc", "1001", "2.5"])
    def test_a_bad_page_size_is_a_400(self, api, internal, page_size):
        response = api.get(url("node-children", internal["user"]), {"page_size": page_size})
        assert response.status_code == 400
        assert "page_size" in response.json()

    def test_page_size_up_to_1000_is_accepted(self, api, internal):
        response = api.get(url("node-children", internal["user"]), {"page_size": "1000"})
        assert response.status_code == 200

    def test_a_bad_cursor_is_a_400(self, api, internal):
        response = api.get(url("node-children", internal["user"]), {"cursor": "not-a-cursor"})
        assert response.status_code == 400
        assert "cursor" in response.json()

    def test_children_of_an_unknown_id_is_a_404(self, api, internal):
        assert api.get(url("node-children", "memory_nope")).status_code == 404

    def test_a_document_has_no_children(self, api, internal):
        document = DocumentFactory()
        response = api.get(url("node-children", document))
        assert response.status_code == 200 and response.json()["results"] == []

    def test_query_count_does_not_grow_with_the_folder(self, api, internal, django_assert_num_queries):
        """Children have creators and content, so a per-item query for either would show."""
        folder = NodeFactory(name="logs")
        creators = UserFactory.create_batch(3)

        def add_children(count: int) -> None:
            for index in range(count):
                DocumentFactory(parent=folder, by=acting(creators[index % len(creators)]))

        add_children(3)
        api.get(url("node-roots"))  # the token's first use is noted (at most once a minute): not measured here
        with CaptureQueriesContext(connection) as small:
            response = api.get(url("node-children", folder))
        assert len(response.json()["results"]) == 3

        add_children(57)
        with django_assert_num_queries(len(small.captured_queries)):
            response = api.get(url("node-children", folder))
        results = response.json()["results"]
        assert len(results) == 60
        assert all(item["created_by"] and item["content_size"] is not None for item in results)


def test_ancestors_are_listed_root_first(api, internal):
    outer = NodeFactory(name="outer")
    inner = NodeFactory(parent=outer, name="inner")
    leaf = DocumentFactory(parent=inner, name="leaf.md")
    response = api.get(url("node-ancestors", leaf))
    assert response.status_code == 200
    assert [(item["name"], item["path"]) for item in response.json()] == [
        ("swarmstar", "/swarmstar"),
        ("outer", "/swarmstar/outer"),
        ("inner", "/swarmstar/outer/inner"),
    ]


def test_a_root_has_no_ancestors(api, internal):
    response = api.get(url("node-ancestors", internal["user"]))
    assert response.status_code == 200 and response.json() == []


def test_ancestors_of_an_unknown_id_is_a_404(api, internal):
    assert api.get(url("node-ancestors", "memory_nope")).status_code == 404


class TestResolve:
    def test_resolves_a_readable_path(self, api, internal):
        response = api.get(url("node-resolve"), {"path": "/user/user_preferences.md"})
        assert response.status_code == 200
        body = response.json()
        assert body["name"] == "user_preferences.md" and body["path"] == "/user/user_preferences.md"
        assert body["id"] == selectors.node_resolve(space=default_space(), path="/user/user_preferences.md").id

    def test_resolves_a_deep_path(self, api, internal):
        folder = NodeFactory(name="a b")
        services.node_create(parent=folder, type="document", name="ünï.md", content=b"", by=system())
        response = api.get(url("node-resolve"), {"path": "/swarmstar/a b/ünï.md"})
        assert response.status_code == 200
        assert response.json()["parent"] == folder.id

    def test_an_absent_path_is_a_404(self, api, internal):
        response = api.get(url("node-resolve"), {"path": "/user/nothing.md"})
        assert response.status_code == 404
        assert "No memory node at '/user/nothing.md'" in response.json()["detail"]

    @pytest.mark.parametrize("path", ["user/user_preferences.md", "/", "", "   "])
    def test_a_malformed_path_is_a_400(self, api, internal, path):
        response = api.get(url("node-resolve"), {"path": path})
        assert response.status_code == 400
        assert "path" in response.content.decode()

    def test_a_missing_path_is_a_400(self, api, internal):
        response = api.get(url("node-resolve"))
        assert response.status_code == 400
        assert response.json() == {"path": ["This field is required."]}


def read_url(endpoint: str, node: Node) -> str:
    """GET a node by its id, or by its path."""
    if endpoint == "node-detail":
        return url("node-detail", node)
    return f"{url('node-resolve')}?{urlencode({'path': selectors.node_path(node=node)})}"


def tables(queries: CaptureQueriesContext) -> list[str]:
    """The table each query reads, by its first column's."""
    return [re.match(r'SELECT "(\w+)"\.', query["sql"])[1] for query in queries.captured_queries]


@pytest.mark.parametrize("endpoint", ["node-detail", "node-resolve"])
class TestReadCost:
    """What reading one node costs a session and a token: its queries, and no compiling of the
    principal's read once it was compiled (docs/benchmarks.md, the cost of spaces)."""

    def test_by_a_session(self, client, user, internal, endpoint, compiles):
        document = DocumentFactory(parent=NodeFactory(), by=acting(user))
        client.force_login(user)
        address = read_url(endpoint, document)
        client.get(address)  # compiles the principal's read on this connection
        compiles.clear()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(address)
        assert response.status_code == 200 and response.json()["id"] == document.pk
        # The session, its user, the membership acted through (with its space); the node, its
        # ancestors (its path), its creator.
        assert tables(queries) == [
            "django_session",
            "auth_user",
            "spaces_membership",
            "memory_node",
            "memory_node",
            "auth_user",
        ]
        assert {compiler.query.model for compiler in compiles}.isdisjoint({Membership, ApiToken})

    def test_by_a_token(self, api, user, internal, endpoint, compiles):
        document = DocumentFactory(parent=NodeFactory(), by=acting(user))
        address = read_url(endpoint, document)
        api.get(address)  # compiles the token's read; notes its use
        compiles.clear()
        with CaptureQueriesContext(connection) as queries:
            response = api.get(address)
        assert response.status_code == 200 and response.json()["id"] == document.pk
        # The token with its user, space and member's role; the node, its ancestors, its creator.
        assert tables(queries) == ["spaces_apitoken", "memory_node", "memory_node", "auth_user"]
        assert {compiler.query.model for compiler in compiles}.isdisjoint({Membership, ApiToken})
