"""GET /api/nodes/{id}/history/{version}/: a text document as it was, with a unified diff; POST
.../restore/: that version made the newest, as a new version, refused as an edit is."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memory import selectors, services
from memory.models import NodeEvent, NodeVersion
from memsite.spaces.logic import Role
from tests.factories import DocumentFactory, NodeFactory, UserFactory, acting, token_for

pytestmark = pytest.mark.django_db


def version_url(node, version: int, restore: bool = False) -> str:
    name = "memory-api:node-restore" if restore else "memory-api:node-version"
    return reverse(name, kwargs={"node_id": node.pk, "version": version})


@pytest.fixture
def document(internal, user):
    """Version 1: 'a b c' on three lines; 2: b changed; 3: described."""
    document = DocumentFactory(name="plan.md", description="First.", content=b"a\nb\nc\n", by=acting(user))
    services.node_content_set(node=document, data=b"a\nB\nc\n", by=acting(user))
    services.node_update(node=document, description="Third.", by=acting(user))
    return selectors.node_fresh(node=document)


def test_a_version_comes_with_its_diff_from_the_one_before(api, document):
    response = api.get(version_url(document, 2))
    assert response.status_code == 200, response.content
    assert response["ETag"] == '"3"'  # the document's version now, for a restore's If-Match
    assert response.json() == {
        "version": 2,
        "name": "plan.md",
        "description": "First.",
        "content": "a\nB\nc\n",
        "against": 1,
        "diff": "--- version 1\n+++ version 2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
        "diff_cut": False,
    }


def test_the_first_version_is_against_the_empty_document(api, document):
    body = api.get(version_url(document, 1)).json()
    assert body["against"] == 0
    assert body["diff"] == "--- version 0\n+++ version 1\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"


def test_against_names_the_version_to_diff_from(api, document):
    body = api.get(version_url(document, 1) + "?against=3").json()
    assert body["against"] == 3 and "-B\n+b\n" in body["diff"]
    assert api.get(version_url(document, 3) + "?against=2").json()["diff"] == ""  # only the description changed


def test_with_the_version_before_no_longer_kept_there_is_no_diff(api, document):
    NodeVersion.objects.filter(node=document, version=1).delete()
    body = api.get(version_url(document, 2)).json()
    assert (body["against"], body["diff"], body["content"]) == (None, "", "a\nB\nc\n")
    assert api.get(version_url(document, 2) + "?against=1").status_code == 404


@pytest.mark.parametrize("query", ["?against=-1", "?against=x", "?against=99999999999"])
def test_a_bad_against_is_a_400(api, document, query):
    assert api.get(version_url(document, 2) + query).status_code == 400


@pytest.mark.parametrize("version", [0, 4, 10**20])
def test_a_version_it_never_had_is_a_404(api, document, version):
    response = api.get(version_url(document, version))
    assert response.status_code == 404 and "has no version" in response.json()["detail"]


def test_a_folder_has_no_versions_to_read(api, internal):
    response = api.get(version_url(NodeFactory(), 1))
    assert response.status_code == 404 and "only text documents" in response.json()["detail"]


def test_a_restore_answers_the_document_at_its_new_version(api, document, user):
    response = api.post(version_url(document, 1, restore=True), {"version": 3}, format="json")
    assert response.status_code == 200, response.content
    assert response["ETag"] == '"4"'
    assert (response.json()["version"], response.json()["description"]) == (4, "First.")
    assert api.get(f"/api/nodes/{document.pk}/content/").content == b"a\nb\nc\n"
    latest = api.get(reverse("memory-api:node-history", kwargs={"node_id": document.pk})).json()["results"][0]
    assert {key: latest[key] for key in ("action", "user", "version_before", "version_after", "restored_from")} == {
        "action": "restore",
        "user": user.username,
        "version_before": 3,
        "version_after": 4,
        "restored_from": 1,
    }


def test_a_restore_takes_the_version_from_if_match_too(api, document):
    response = api.post(version_url(document, 1, restore=True), {}, format="json", HTTP_IF_MATCH='"3"')
    assert response.status_code == 200, response.content


def test_a_stale_version_is_a_409_that_says_so(api, document):
    response = api.post(version_url(document, 1, restore=True), {"version": 2}, format="json")
    assert response.status_code == 409
    assert "it is at version 3, not 2" in response.json()["detail"]
    assert selectors.node_fresh(node=document).version == 3


def test_restoring_the_version_now_answers_it_unchanged(api, document):
    response = api.post(version_url(document, 3, restore=True), {"version": 3}, format="json")
    assert response.status_code == 200 and response.json()["version"] == 3
    assert NodeEvent.objects.filter(node_id=document.pk, action="restore").count() == 0


def test_a_reader_may_read_versions_but_not_restore(document):
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Token {token_for(UserFactory(role=Role.READER))}")
    assert reader.get(version_url(document, 1)).status_code == 200
    assert reader.post(version_url(document, 1, restore=True), {"version": 3}, format="json").status_code == 403
    assert selectors.node_fresh(node=document).version == 3


def test_a_token_limited_to_a_folder_restores_nothing_outside_it(document, user):
    limited = APIClient()
    limited.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user, write_under='/swarmstar/elsewhere/')}")
    response = limited.post(version_url(document, 1, restore=True), {"version": 3}, format="json")
    assert response.status_code == 403 and "writes only under" in response.json()["detail"]


@pytest.mark.parametrize("body", [{"version": 0}, {"version": "3"}, {"other": 1}, []])
def test_a_bad_body_is_a_400(api, document, body):
    assert api.post(version_url(document, 1, restore=True), body, format="json").status_code == 400
