"""The four internal folders (swarmstar, user, projects, references) are the roots of the tree and
immutable: nobody renames, retypes, moves or deletes them, gives them context or content, or
makes another. The one change they take is a new description, and only staff make it: through
the API with a staff token, on the dashboard, or in the admin. Everyone else gets 403 and the
tree is left exactly as it was.

Ordinary nodes go *into* them for everyone (every node of the tree lives under one), and that
stays so."""

import json

import pytest
from django.contrib.admin.utils import quote
from django.contrib.messages import get_messages
from django.urls import reverse

from memory.models import Node
from tests.security.routes import client_for
from tests.security.test_authorization import fingerprint, rolled_back
from tests.security.world import World

pytestmark = pytest.mark.django_db

INTERNAL = ("swarmstar", "user", "projects", "references")
HTMX = {"HTTP_HX_REQUEST": "true"}


def api_client(world: World, staff: bool):
    client = client_for(world, "anonymous")
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {world.staff_token if staff else world.user_token}"
    return client


def patch(client, folder: Node, body: dict):
    return client.patch(f"/api/nodes/{folder.pk}/", json.dumps(body), content_type="application/json")


# Each change: how it is asked for, by the API (a token) or by a dashboard form (a session).
API_CHANGES = {
    "rename": lambda c, w, f: patch(c, f, {"name": "renamed"}),
    "retype": lambda c, w, f: patch(c, f, {"type": "folder"}),
    "context": lambda c, w, f: patch(c, f, {"context": {"file_path": "a.txt"}}),
    "delete": lambda c, w, f: c.delete(f"/api/nodes/{f.pk}/"),
    "move": lambda c, w, f: c.post(
        f"/api/nodes/{f.pk}/move/", json.dumps({"parent": w.destination.pk}), content_type="application/json"
    ),
    "content": lambda c, w, f: c.put(f"/api/nodes/{f.pk}/content/", b"# mine", content_type="text/markdown"),
    "create an internal folder in it": lambda c, w, f: c.post(
        "/api/nodes/",
        json.dumps({"parent": f.pk, "type": "internal_folder", "name": "more"}),
        content_type="application/json",
    ),
}
PAGE_CHANGES = {
    "rename": lambda c, w, f: c.post(
        reverse("memory:node_update", args=[f.pk]), {"version": f.version, "name": "renamed"}, **HTMX
    ),
    "delete": lambda c, w, f: c.post(reverse("memory:node_delete", args=[f.pk]), **HTMX),
    "content": lambda c, w, f: c.post(
        reverse("memory:document_save", args=[f.pk]), {"version": f.version, "content": "# mine"}, **HTMX
    ),
}


def describe_by_api(client, world, folder):
    return patch(client, folder, {"description": "Described."})


def describe_by_page(client, world, folder):
    return client.post(
        reverse("memory:node_update", args=[folder.pk]),
        {"version": folder.version, "description": "Described."},
        **HTMX,
    )


@pytest.mark.parametrize("name", INTERNAL)
@pytest.mark.parametrize("change", API_CHANGES)
@pytest.mark.parametrize("staff", [False, True], ids=["token", "staff_token"])
def test_the_api_changes_no_internal_folder(world, name, change, staff):
    folder = world.internal[name]
    client = api_client(world, staff)
    before = fingerprint()
    response = API_CHANGES[change](client, world, folder)
    assert response.status_code == 403, response.content
    assert "internal" in response.json()["detail"].lower()
    assert fingerprint() == before


@pytest.mark.parametrize("name", INTERNAL)
@pytest.mark.parametrize("change", PAGE_CHANGES)
@pytest.mark.parametrize("caller", ["user", "staff"])
def test_the_dashboard_changes_no_internal_folder(world, name, change, caller):
    folder = world.internal[name]
    client = client_for(world, caller)
    before = fingerprint()
    response = PAGE_CHANGES[change](client, world, folder)
    assert response.status_code == 403, response.content
    assert "internal folder" in response.content.decode()
    assert fingerprint() == before


@pytest.mark.parametrize("name", INTERNAL)
def test_only_staff_describe_an_internal_folder(world, name):
    folder = world.internal[name]
    for describe, user_client, staff_client in (
        (describe_by_api, api_client(world, staff=False), api_client(world, staff=True)),
        (describe_by_page, client_for(world, "user"), client_for(world, "staff")),
    ):
        with rolled_back():
            before = fingerprint()
            refused = describe(user_client, world, folder)
            assert refused.status_code == 403 and "Only owners" in refused.content.decode()
            assert fingerprint() == before
            allowed = describe(staff_client, world, folder)
            assert allowed.status_code == 200, allowed.content
            changed = Node.objects.get(pk=folder.pk)
            assert (changed.name, changed.type, changed.description) == (name, "internal_folder", "Described.")


@pytest.mark.parametrize("name", INTERNAL)
def test_the_admin_lets_staff_describe_an_internal_folder_and_nothing_more(world, name):
    folder = world.internal[name]
    client = client_for(world, "staff")
    change = reverse("admin:memory_node_change", args=[quote(folder.pk)])
    form = {
        "name": "renamed",
        "type": "folder",
        "description": "Described.",
        "context": "{}",
        "expected_version": folder.version,
    }
    response = client.post(change, form)
    assert response.status_code == 302, response.content
    changed = Node.objects.get(pk=folder.pk)
    # A write the services refuse also redirects: its message says why.
    said = [str(message) for message in get_messages(response.wsgi_request)]
    assert (changed.name, changed.type, changed.description) == (name, "internal_folder", "Described."), said

    before = fingerprint()
    assert client.post(reverse("admin:memory_node_delete", args=[quote(folder.pk)]), {"post": "yes"}).status_code == 403
    assert fingerprint() == before


@pytest.mark.parametrize("name", INTERNAL)
def test_the_admin_is_closed_to_others(world, name):
    folder = world.internal[name]
    change = reverse("admin:memory_node_change", args=[quote(folder.pk)])
    for caller in ("anonymous", "token", "user"):
        client = client_for(world, caller)
        before = fingerprint()
        response = client.post(change, {"description": "Mine.", "expected_version": folder.version})
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
        assert fingerprint() == before


@pytest.mark.parametrize("name", INTERNAL)
@pytest.mark.parametrize("caller", ["token", "user"])
def test_anyone_may_still_put_nodes_into_an_internal_folder(world, name, caller):
    folder = world.internal[name]
    client = api_client(world, staff=False) if caller == "token" else client_for(world, "user")
    response = client.post(
        "/api/nodes/",
        json.dumps({"parent": folder.pk, "type": "folder", "name": "added"}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert Node.objects.get(pk=response.json()["id"]).parent_id == folder.pk
