import re

import pytest
from django.urls import reverse

from memory import selectors
from tests.factories import DocumentFactory, NodeFactory
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/memory/",
        "/user/preferences/",
        "/memory/memory_0123/",
        "/memory/memory_0123/children/",
    ],
)
def test_anonymous_users_are_sent_to_log_in(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(f"{reverse('login')}?next=")


def test_anonymous_posts_are_sent_to_log_in_and_change_nothing(client, internal):
    response = client.post(
        reverse("memory:node_create", args=[internal["swarmstar"].pk]), {"type": "folder", "name": "x"}
    )
    assert response.status_code == 302
    assert selectors.node_children(node=internal["swarmstar"]).count() == 0


def test_the_browser_lists_the_roots(user_client, internal):
    response = user_client.get(reverse("memory:browser"))
    assert response.status_code == 200
    html = response.content.decode()
    for folder in internal.values():
        assert f'id="item-{folder.pk}"' in html
        assert reverse("memory:node_children", args=[folder.pk]) in html
    assert "<html" in html and 'name="htmx-config"' in html
    assert "django_htmx/htmx-2.min.js" in html
    assert "X-CSRFToken" in html


def test_the_layout_has_navigation_and_a_logout_form(user_client):
    html = user_client.get(reverse("memory:browser")).content.decode()
    assert reverse("memory:user_preferences") in html and "/api/docs/" in html
    assert f'method="post" action="{reverse("logout")}"' in html
    assert reverse("admin:index") not in html


def test_staff_see_the_admin_link(staff_client):
    assert reverse("admin:index") in staff_client.get(reverse("memory:browser")).content.decode()


def test_the_children_partial_of_an_htmx_request_is_only_the_partial(user_client, internal):
    folder = NodeFactory(name="reports")
    document = DocumentFactory(parent=folder, name="weekly.md")
    response = user_client.get(reverse("memory:node_children", args=[internal["swarmstar"].pk]), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "<body" not in html
    assert f'id="item-{folder.pk}"' in html
    assert document.name not in html  # grandchildren load when their folder opens
    assert "Load more" not in html
    assert "HX-Request" in response["Vary"]


def test_the_children_partial_paginates_by_path(user_client, internal, settings):
    settings.MEMSITE_CHILDREN_PAGE_SIZE = 3
    parent = internal["references"]
    nodes = [NodeFactory(parent=parent, name=f"ref-{index}") for index in range(7)]
    url = reverse("memory:node_children", args=[parent.pk])

    seen = []
    after = None
    for _ in range(3):
        response = user_client.get(url, {"after": after} if after else {}, **HTMX)
        html = response.content.decode()
        page = [node.name for node in nodes if f'id="item-{node.pk}"' in html]
        seen.append(page)
        match = re.search(r'\?after=([0-9A-Z]+)"', html)
        after = match.group(1) if match else None
        assert ("Load more" in html) == (after is not None)
    assert seen == [["ref-0", "ref-1", "ref-2"], ["ref-3", "ref-4", "ref-5"], ["ref-6"]]
    assert after is None


def test_a_bad_page_key_is_refused(user_client, internal):
    url = reverse("memory:node_children", args=[internal["user"].pk])
    assert user_client.get(url, {"after": "../x"}, **HTMX).status_code == 400


def test_children_of_a_document_are_refused(user_client):
    document = DocumentFactory()
    assert user_client.get(reverse("memory:node_children", args=[document.pk]), **HTMX).status_code == 400


def test_the_refusal_of_children_is_plain_text_not_html(user_client, internal):
    document = DocumentFactory(name="<script>alert(1).md")  # names may not hold "/"
    response = user_client.get(reverse("memory:node_children", args=[document.pk]), **HTMX)
    assert response.status_code == 400 and "<script>alert(1).md" in response.content.decode()
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    response = user_client.get(reverse("memory:node_children", args=[internal["user"].pk]), {"after": "<b>"}, **HTMX)
    assert response.status_code == 400 and response["Content-Type"] == "text/plain; charset=utf-8"


def test_the_children_url_without_htmx_goes_to_the_folder_page(user_client, internal):
    folder = internal["user"]
    response = user_client.get(reverse("memory:node_children", args=[folder.pk]))
    assert response["Location"] == reverse("memory:node_detail", args=[folder.pk])


def test_an_empty_folder_says_so(user_client):
    folder = NodeFactory()
    html = user_client.get(reverse("memory:node_children", args=[folder.pk]), **HTMX).content.decode()
    assert "Empty folder" in html


def test_an_unknown_node_is_404(user_client):
    assert user_client.get(reverse("memory:node_detail", args=["memory_" + "0" * 32])).status_code == 404


def test_the_login_page_renders(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="username"' in html and 'name="password"' in html and "csrfmiddlewaretoken" in html
