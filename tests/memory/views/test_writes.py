import re

import pytest
from django.test import Client
from django.urls import reverse

from memory import selectors
from memory.models import Node
from tests.factories import DocumentFactory, NodeFactory, default_space
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db


def post(client, name, node, data=None, **extra):
    return client.post(reverse(f"memory:{name}", args=[node.pk]), data or {}, **extra)


def test_create_a_folder_with_htmx(user_client, user, internal):
    parent = internal["swarmstar"]
    data = {"type": "folder", "name": "logs", "description": "Run logs", "shown": [parent.pk]}
    response = post(user_client, "node_create", parent, data, **HTMX)
    assert response.status_code == 200
    node = selectors.node_resolve(space=default_space(), path="/swarmstar/logs")
    assert (node.type, node.description, node.created_by) == ("folder", "Run logs", user)
    html = response.content.decode()
    assert "Created &#x27;logs&#x27;." in html and f'data-node-id="{node.pk}"' in html
    # the new item is added to the parent's list, and its count refreshed, out of band: the
    # folders already open in that list stay open
    assert f'<ul hx-swap-oob="beforeend:#children-{parent.pk}">' in html and f'id="item-{node.pk}"' in html
    assert f'id="count-{parent.pk}" title="children" hx-swap-oob="true">1<' in html
    assert response["HX-Push-Url"] == reverse("memory:node_detail", args=[node.pk])


def test_create_a_document_with_content(user_client, internal):
    folder = NodeFactory()
    data = {"type": "document", "name": "todo.md", "content": "# Todo\n\n- write tests\n"}
    assert post(user_client, "node_create", folder, data, **HTMX).status_code == 200
    node = selectors.node_children(node=folder).get()
    assert selectors.node_content(node=node) == b"# Todo\n\n- write tests\n"


def test_create_without_htmx_redirects_to_the_new_node(user_client, internal):
    response = post(user_client, "node_create", internal["references"], {"type": "folder", "name": "python"})
    node = selectors.node_resolve(space=default_space(), path="/references/python")
    assert response.status_code == 302 and response["Location"] == reverse("memory:node_detail", args=[node.pk])
    assert "Created" in user_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "data, status, message",
    [
        ({"type": "folder", "name": "a/b"}, 400, "must not contain"),
        ({"type": "folder", "name": ""}, 400, "Name: This field is required."),
        ({"type": "internal_folder", "name": "x"}, 400, "Select a valid choice"),
        ({"type": "project_root_folder", "name": "p"}, 400, "directly in the"),
    ],
)
def test_create_shows_the_refusal(user_client, internal, data, status, message):
    response = post(user_client, "node_create", internal["swarmstar"], data, **HTMX)
    assert response.status_code == status
    assert message in response.content.decode()
    assert selectors.node_children(node=internal["swarmstar"]).count() == 0


def test_create_with_a_taken_name_is_a_conflict(user_client):
    folder = NodeFactory()
    NodeFactory(parent=folder, name="dup")
    response = post(user_client, "node_create", folder, {"type": "folder", "name": "dup"}, **HTMX)
    assert response.status_code == 409 and "already has a child named" in response.content.decode()


def test_create_without_htmx_shows_the_refusal_on_the_page(user_client, internal):
    response = post(user_client, "node_create", internal["swarmstar"], {"type": "folder", "name": "a/b"})
    assert response.status_code == 400
    assert "<html" in response.content.decode() and "must not contain" in response.content.decode()


def test_rename_and_describe(user_client):
    folder = NodeFactory(name="old")
    data = {"version": folder.version, "name": "new", "description": "Fresh words"}
    response = post(user_client, "node_update", folder, {**data, "shown": [folder.pk]}, **HTMX)
    assert response.status_code == 200 and "Saved." in response.content.decode()
    folder.refresh_from_db()
    assert (folder.name, folder.description, folder.version) == ("new", "Fresh words", 2)
    # only the item's link is swapped: were the folder open in the tree, it stays open
    link = rf'<a class="node-link" id="link-{folder.pk}"[^>]*hx-swap-oob="true"[^>]*>new</a>'
    assert re.search(link, response.content.decode())


def test_rename_with_a_stale_version_is_a_conflict(user_client):
    folder = NodeFactory(name="old")
    response = post(user_client, "node_update", folder, {"version": folder.version + 5, "name": "new"}, **HTMX)
    assert response.status_code == 409 and "changed by someone else" in response.content.decode()
    folder.refresh_from_db()
    assert folder.name == "old"


def test_internal_folders_cannot_be_renamed(user_client, staff_client, internal):
    folder = internal["projects"]
    for client in (user_client, staff_client):
        response = post(client, "node_update", folder, {"version": folder.version, "name": "mine"}, **HTMX)
        assert response.status_code == 403 and "cannot be renamed" in response.content.decode()
    assert Node.objects.get(pk=folder.pk).name == "projects"


def test_only_staff_describe_internal_folders(client, user, staff, internal):
    folder = internal["references"]
    client.force_login(user)
    response = post(client, "node_update", folder, {"version": folder.version, "description": "mine"}, **HTMX)
    assert response.status_code == 403 and "Only owners" in response.content.decode()
    staff.save()
    client.force_login(staff)
    response = post(client, "node_update", folder, {"version": folder.version, "description": "Scraped docs."}, **HTMX)
    assert response.status_code == 200
    assert Node.objects.get(pk=folder.pk).description == "Scraped docs."


def test_delete_a_branch(user_client):
    folder = NodeFactory()
    DocumentFactory(parent=folder)
    parent = selectors.node_get(space=default_space(), node_id=folder.parent_id)
    response = post(user_client, "node_delete", folder, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert f"Deleted &#x27;{folder.name}&#x27; and 1 node inside it." in html
    assert f'data-node-id="{parent.pk}"' in html and f'id="item-{folder.pk}"' not in html
    assert not Node.objects.filter(pk=folder.pk).exists()
    assert response["HX-Push-Url"] == reverse("memory:node_detail", args=[parent.pk])


def test_delete_without_htmx_redirects_to_the_parent(user_client):
    document = DocumentFactory()
    response = post(user_client, "node_delete", document)
    assert response["Location"] == reverse("memory:node_detail", args=[document.parent_id])


def test_internal_folders_cannot_be_deleted(staff_client, internal):
    response = post(staff_client, "node_delete", internal["user"], **HTMX)
    assert response.status_code == 403 and "cannot be deleted" in response.content.decode()
    assert Node.objects.filter(pk=internal["user"].pk).exists()


def test_writes_need_post(user_client, internal):
    assert user_client.get(reverse("memory:node_delete", args=[internal["user"].pk])).status_code == 405


def test_writes_need_the_csrf_token(user, internal):
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(user)
    response = post(csrf_client, "node_create", internal["swarmstar"], {"type": "folder", "name": "x"}, **HTMX)
    assert response.status_code == 403
    # htmx sends the token from the body's hx-headers as X-CSRFToken
    csrf_client.get(reverse("memory:browser"))
    token = csrf_client.cookies["csrftoken"].value
    data = {"type": "folder", "name": "x"}
    response = post(csrf_client, "node_create", internal["swarmstar"], data, HTTP_X_CSRFTOKEN=token, **HTMX)
    assert response.status_code == 200


def test_log_out_is_a_post(user_client):
    response = user_client.post(reverse("logout"))
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert user_client.get(reverse("memory:browser")).status_code == 302
