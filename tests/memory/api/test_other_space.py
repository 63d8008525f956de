"""A space's memory is its own: a member of another space, given the id or path of a node,
search or question of the default space, gets the 404 of one that does not exist, changes
nothing, and finds nothing of it."""

import io
import tarfile

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memory import selectors
from memory.models import Node, NodeEvent, Search, SearchQuestion
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set, token_create
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, SearchFactory, UserFactory, default_space
from tests.security.test_authorization import fingerprint

pytestmark = pytest.mark.django_db


def url(name: str, *args) -> str:
    return reverse(f"memory-api:{name}", args=args)


@pytest.fixture
def other() -> Space:
    return Space.objects.create(slug="other", name="Other")


@pytest.fixture
def outsider(other) -> APIClient:
    """An owner of the other space (and of no other), with a token of it that manages it."""
    user = UserFactory(role=Role.OWNER)
    Space.objects.get(slug=default_space().slug).memberships.filter(user=user).delete()
    membership_set(space=other, member=user, role=Role.OWNER)
    client = APIClient()
    key = token_create(member=user, space=other, name="other", role=Role.OWNER, manage=True).key
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(url("node-roots")).status_code == 200  # its first use is recorded now, not below
    return client


@pytest.fixture
def theirs():
    """Nodes, a search and its question, of the default space."""
    folder = NodeFactory(name="private")
    document = DocumentFactory(parent=folder, name="secret.md", content=b"The vault code is 4711.")
    project = ProjectFactory(name="vault")
    search = SearchFactory(status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=search, questions=search.questions)
    return {"folder": folder, "document": document, "project": project, "search": search, "question": question}


def refused(client: APIClient, method: str, path: str, body=None, **options) -> None:
    before = fingerprint()
    response = getattr(client, method)(path, body, **options)
    assert response.status_code == 404, response.content
    assert fingerprint() == before


def own_folder(space: Space) -> Node:
    return NodeFactory(parent=selectors.node_internal_folder(space=space, name="swarmstar"), name="mine")


def test_a_node_of_another_space_is_missing_to_every_node_endpoint(outsider, theirs):
    document, folder = theirs["document"].pk, theirs["folder"].pk
    refused(outsider, "get", url("node-detail", document))
    refused(outsider, "patch", url("node-detail", document), {"name": "taken.md"}, format="json")
    refused(outsider, "delete", url("node-detail", document))
    refused(outsider, "get", url("node-children", folder))
    refused(outsider, "get", url("node-ancestors", document))
    refused(outsider, "get", url("node-history", document))
    refused(outsider, "get", url("node-version", document, 1))
    refused(outsider, "post", url("node-restore", document, 1), {"version": 1}, format="json")
    refused(outsider, "get", url("node-content", document))
    refused(outsider, "put", url("node-content", document), b"overwritten", content_type="text/markdown")
    refused(outsider, "get", url("node-resolve") + "?path=/swarmstar/private/secret.md")
    body = {"parent": folder, "type": "document", "name": "planted.md", "content": "x"}
    refused(outsider, "post", url("node-create"), body, format="json")


def test_moves_refuse_a_node_of_another_space_on_either_side(outsider, other, theirs):
    mine = own_folder(other)
    refused(outsider, "post", url("node-move", theirs["document"].pk), {"parent": mine.pk}, format="json")
    refused(outsider, "post", url("node-move", mine.pk), {"parent": theirs["folder"].pk}, format="json")


def test_a_deleted_nodes_history_stays_its_spaces(outsider, theirs, staff_api):
    document = theirs["document"].pk
    assert staff_api.delete(url("node-detail", document)).status_code == 204
    refused(outsider, "get", url("node-history", document))
    assert staff_api.get(url("node-history", document)).status_code == 200


def test_a_project_of_another_space_is_neither_exported_nor_imported_into(outsider, theirs):
    project = theirs["project"].pk
    refused(outsider, "get", url("project-export", project))
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo("planted.txt")
        tar.addfile(info, io.BytesIO(b""))
    upload = {"archive": io.BytesIO(archive.getvalue()), "mode": "merge"}
    upload["archive"].name = "a.tar.gz"
    refused(outsider, "post", url("project-import", project), upload, format="multipart")


def test_a_search_or_question_of_another_space_is_missing(outsider, theirs):
    search, question = theirs["search"].pk, theirs["question"].pk
    refused(outsider, "get", url("search-detail", search))
    refused(outsider, "get", url("search-steps", search))
    refused(outsider, "post", url("search-cancel", search))
    refused(outsider, "post", url("question-answer", question), {"answer": "4711"}, format="json")
    assert outsider.get(url("question-list")).json()["results"] == []
    body = {"questions": ["What is the vault code?"], "start_node": theirs["folder"].pk}
    refused(outsider, "post", url("search-start"), body, format="json")


def test_retrieval_finds_nothing_of_another_space(outsider, other, theirs, staff_api):
    DocumentFactory(parent=own_folder(other), name="ours.md", content=b"Our vault has no code.")
    body = {"query": "vault code", "k": 20}
    mine = outsider.post(url("retrieve"), body, format="json").json()["results"]
    assert {hit["name"] for hit in mine} == {"ours.md"}
    assert "secret.md" in {
        hit["name"] for hit in staff_api.post(url("retrieve"), body, format="json").json()["results"]
    }
    refused(outsider, "post", url("retrieve"), {**body, "start": theirs["folder"].pk}, format="json")


def test_the_roots_are_the_spaces_own(outsider, other, staff_api):
    mine = [root["id"] for root in outsider.get(url("node-roots")).json()]
    assert mine == list(selectors.node_roots(space=other).values_list("pk", flat=True))
    assert set(mine).isdisjoint(root["id"] for root in staff_api.get(url("node-roots")).json())
    resolved = outsider.get(url("node-resolve") + "?path=/user/user_preferences.md").json()
    assert Node.objects.get(pk=resolved["id"]).space == other


def test_a_token_that_wrote_is_recorded_in_the_nodes_history(outsider, other):
    mine = own_folder(other)
    response = outsider.patch(url("node-detail", mine.pk), {"description": "Ours."}, format="json")
    assert response.status_code == 200
    event = NodeEvent.objects.filter(node_id=mine.pk, action=NodeEvent.Action.UPDATE).get()
    assert event.token is not None and event.token.space == other and event.space == other
    assert NodeEvent.objects.filter(node_id=mine.pk, action=NodeEvent.Action.CREATE).get().token is None
