"""A token limited to a folder (`write_under`) writes only under it and reads everything: every
write outside, the folder itself included, is a 403 that says where the token writes and leaves
the tree as it was. A move needs both ends under the folder; a question's answer, kept as a
document in /user/, needs the token to write there."""

import io
import json
import re
from dataclasses import dataclass

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memory import selectors, services
from memory.models import Node, Search, SearchQuestion
from memory.services import NodeSpec
from memsite.errors import Forbidden
from memsite.spaces.principals import token_principal
from memsite.spaces.services import token_create
from tests.archives import tar_gz
from tests.factories import (
    DocumentFactory,
    NodeFactory,
    ProjectFactory,
    SearchFactory,
    default_space,
    system,
    token_for,
)
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db

SCOPE = "/swarmstar/nodes/a/"
REFUSAL = "This token writes only under /swarmstar/nodes/a/."


@dataclass
class Tree:
    nodes: Node  # /swarmstar/nodes
    folder: Node  # /swarmstar/nodes/a, the token's folder
    inside: Node  # /swarmstar/nodes/a/notes.md
    sub: Node  # /swarmstar/nodes/a/sub
    other: Node  # /swarmstar/nodes/b
    outside: Node  # /swarmstar/nodes/b/notes.md


@pytest.fixture
def tree(db) -> Tree:
    nodes = NodeFactory(name="nodes")
    folder, other = NodeFactory(parent=nodes, name="a"), NodeFactory(parent=nodes, name="b")
    inside, outside = DocumentFactory(parent=folder, name="notes.md"), DocumentFactory(parent=other, name="notes.md")
    return Tree(nodes, folder, inside, NodeFactory(parent=folder, name="sub"), other, outside)


def client_writing_under(user, write_under: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user, write_under=write_under)}")
    return client


@pytest.fixture
def scoped(user) -> APIClient:
    return client_writing_under(user, SCOPE)


def refused(send) -> None:
    """`send()` is answered with the token's refusal, and nothing of the tree changes."""
    before = tree_state()
    response = send()
    assert response.status_code == 403, response.content
    assert REFUSAL in response.content.decode()
    assert tree_state() == before


def create(client: APIClient, parent: Node, name: str):
    body = {"parent": parent.pk, "type": "document", "name": name, "content": "# new"}
    return client.post(url("node-create"), json.dumps(body), content_type="application/json")


def move(client: APIClient, node: Node, parent: Node):
    return client.post(url("node-move", node), json.dumps({"parent": parent.pk}), content_type="application/json")


def rename(client: APIClient, node: Node, name: str):
    return client.patch(url("node-detail", node), json.dumps({"name": name}), content_type="application/json")


def write(client: APIClient, node: Node):
    return client.put(url("node-content", node), b"# mine", content_type="text/markdown")


def archive() -> io.BytesIO:
    upload = io.BytesIO(tar_gz({"README.md": b"# readme\n"}))
    upload.name = "readme.tar.gz"
    return upload


def import_into(client: APIClient, project: Node):
    return client.post(url("project-import", project), {"archive": archive()}, format="multipart")


def test_creates_in_its_folder_and_below(scoped, tree):
    assert create(scoped, tree.folder, "plan.md").status_code == 201
    assert create(scoped, tree.sub, "deeper.md").status_code == 201
    assert selectors.node_resolve(space=default_space(), path="/swarmstar/nodes/a/sub/deeper.md").type == "document"


@pytest.mark.parametrize("where", ["nodes", "other", "root"])
def test_creates_nothing_outside(scoped, tree, where):
    parent = (
        selectors.node_internal_folder(space=default_space(), name="swarmstar")
        if where == "root"
        else getattr(tree, where)
    )
    refused(lambda: create(scoped, parent, "a2"))  # /swarmstar/nodes/a2 starts like the folder, but is not in it


def test_moves_within_its_folder(scoped, tree):
    response = move(scoped, tree.inside, tree.sub)
    assert response.status_code == 200, response.content
    assert (
        selectors.node_path(node=selectors.node_get(space=default_space(), node_id=tree.inside.pk))
        == "/swarmstar/nodes/a/sub/notes.md"
    )


@pytest.mark.parametrize(
    "node, parent",
    [("outside", "folder"), ("inside", "other"), ("outside", "nodes"), ("folder", "other")],
    ids=["in", "out", "elsewhere outside", "its own folder"],
)
def test_moves_nothing_in_or_out(scoped, tree, node, parent):
    refused(lambda: move(scoped, getattr(tree, node), getattr(tree, parent)))


def test_updates_and_writes_inside(scoped, tree):
    assert rename(scoped, tree.inside, "renamed.md").status_code == 200
    assert write(scoped, tree.inside).status_code == 200
    assert selectors.node_content(node=tree.inside) == b"# mine"


@pytest.mark.parametrize("node", ["outside", "other", "folder"])
def test_renames_nothing_outside(scoped, tree, node):
    refused(lambda: rename(scoped, getattr(tree, node), "renamed"))


def test_describes_nothing_outside(scoped, tree):
    body = json.dumps({"description": "Mine now."})
    refused(lambda: scoped.patch(url("node-detail", tree.outside), body, content_type="application/json"))


def test_writes_no_content_outside(scoped, tree):
    refused(lambda: write(scoped, tree.outside))


def test_deletes_nothing_outside(scoped, tree):
    for node in (tree.outside, tree.folder):
        refused(lambda node=node: scoped.delete(url("node-detail", node)))
        assert Node.objects.filter(pk=node.pk).exists()
    assert scoped.delete(url("node-detail", tree.inside)).status_code == 204


def test_imports_into_no_project_outside(scoped):
    project = ProjectFactory(name="elsewhere")
    refused(lambda: import_into(scoped, project))


def test_imports_into_a_project_under_its_folder(user):
    project = ProjectFactory(name="mine")
    response = import_into(client_writing_under(user, "/projects/"), project)
    assert response.status_code == 201, response.content
    assert selectors.node_resolve(space=default_space(), path="/projects/mine/README.md").type == "project_file_bytes"


def test_a_token_limited_to_a_project_updates_it(user):
    project = ProjectFactory(name="mine")
    response = import_into(client_writing_under(user, "/projects/mine/"), project)
    assert response.status_code == 201, response.content
    assert selectors.node_resolve(space=default_space(), path="/projects/mine/README.md").type == "project_file_bytes"


def test_reads_everything(scoped, tree):
    assert scoped.get(url("node-detail", tree.outside)).status_code == 200
    assert scoped.get(url("node-content", tree.outside)).content.startswith(b"# notes.md")
    assert scoped.get(url("node-children", tree.other)).json()["results"][0]["id"] == tree.outside.pk
    assert scoped.get(url("node-resolve"), {"path": "/swarmstar/nodes/b/notes.md"}).json()["id"] == tree.outside.pk


def test_a_bulk_create_outside_is_refused(user, tree):
    actor = token_principal(token_create(member=user, space=default_space(), name="a", write_under=SCOPE).token)
    before = tree_state()
    with pytest.raises(Forbidden, match=re.escape(REFUSAL)):
        services.node_bulk_create(parent=tree.other, specs=[NodeSpec(name="x", type="folder")], by=actor)
    assert tree_state() == before
    assert services.node_bulk_create(parent=tree.sub, specs=[NodeSpec(name="x", type="folder")], by=actor) == 1


def test_the_system_and_unlimited_tokens_write_anywhere(user, tree):
    assert services.node_create(parent=tree.other, type="folder", name="by the system", by=system()).pk
    assert create(client_writing_under(user, ""), tree.other, "anywhere.md").status_code == 201


def answer_url(question: SearchQuestion) -> str:
    return reverse("memory-api:question-answer", args=[question.pk])


def waiting_question() -> SearchQuestion:
    search = SearchFactory(status=Search.Status.WAITING)
    return SearchQuestion.objects.create(search=search, questions=search.questions)


def test_answers_no_question_whose_answer_would_land_outside(scoped):
    question = waiting_question()
    refused(lambda: scoped.post(answer_url(question), {"answer": "Port 8000."}, format="json"))
    question.refresh_from_db()
    assert question.status == SearchQuestion.Status.PENDING
    assert Search.objects.get(pk=question.search_id).status == Search.Status.WAITING


def test_a_token_limited_to_the_user_folder_answers(user):
    question = waiting_question()
    client = client_writing_under(user, "/user/")
    answered = client.post(answer_url(question), {"answer": "Port 8000."}, format="json")
    assert answered.status_code == 200, answered.content
    assert selectors.node_path(node=SearchQuestion.objects.get(pk=question.pk).document).startswith("/user/")
