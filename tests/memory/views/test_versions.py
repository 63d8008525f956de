"""A document's versions on the dashboard: the history links each write's changes, a version
page shows them as an escaped line diff, and a restore is confirmed on a page of its own, then
posted at the version that page showed."""

import re

import pytest
from django.urls import reverse

from memory import selectors, services
from memory.logic import diff
from memory.models import NodeEvent, NodeVersion
from memsite.spaces.logic import Role
from tests.factories import DocumentFactory, NodeFactory, UserFactory, acting
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db


def page_url(name: str, node, *args: object) -> str:
    return reverse(f"memory:{name}", args=[node.pk, *args])


@pytest.fixture
def document(internal, user):
    """Version 1: three lines; 2: the second line changed to a script; 3: moved."""
    document = DocumentFactory(name="plan.md", content=b"one\ntwo\nthree\n", by=acting(user))
    services.node_content_set(node=document, data=b"one\n<script>alert(1)</script>\nthree\n", by=acting(user))
    services.node_move(node=document, parent=internal["user"], by=acting(user))
    return selectors.node_fresh(node=document)


@pytest.fixture
def reader_client(client):
    client.force_login(UserFactory(role=Role.READER))
    return client


def diff_lines(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<span class="diff-line diff-([a-z-]+)">(.*?)</span>', html)


def test_the_history_links_each_change_the_version_now_and_a_restore(user_client, document):
    html = user_client.get(page_url("node_history", document), **HTMX).content.decode()
    version_2 = page_url("node_version", document, 2)
    assert f'href="{version_2}"' in html and f'href="{version_2}?against=3"' in html
    assert f'href="{page_url("node_restore", document, 2)}"' in html
    assert f'href="{page_url("node_restore", document, 1)}"' in html
    assert f'href="{page_url("node_version", document, 3)}"' not in html  # a move changes nothing to show


def test_a_reader_is_offered_no_restore(reader_client, document):
    html = reader_client.get(page_url("node_history", document), **HTMX).content.decode()
    assert page_url("node_version", document, 2) in html and "/restore/" not in html


def test_a_version_shows_its_changes_escaped(user_client, document):
    response = user_client.get(page_url("node_version", document, 2))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert" not in html
    assert diff_lines(html) == [
        ("hunk", "@@ -1,3 +1,3 @@"),
        ("same", " one"),
        ("removed", "-two"),
        ("added", "+&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("same", " three"),
    ]
    assert page_url("node_restore", document, 2) in html  # to a writer


def test_a_version_against_the_one_now(user_client, internal, user):
    document = DocumentFactory(content=b"first\n", by=acting(user))
    services.node_content_set(node=document, data=b"second\n", by=acting(user))
    html = user_client.get(page_url("node_version", document, 1) + "?against=2").content.decode()
    assert diff_lines(html)[1:] == [("removed", "-second"), ("added", "+first")]
    assert "in version 2 (now) only" in html


def test_the_first_version_is_all_added(user_client, document):
    html = user_client.get(page_url("node_version", document, 1)).content.decode()
    assert [kind for kind, _ in diff_lines(html)] == ["hunk", "added", "added", "added"]
    assert "as it was created" in html


def test_a_long_diff_says_it_was_cut(user_client, internal, user, monkeypatch):
    monkeypatch.setattr(diff, "LINES_SHOWN", 5)
    document = DocumentFactory(content=b"", by=acting(user))
    services.node_content_set(node=document, data=b"line\n" * 50, by=acting(user))
    html = user_client.get(page_url("node_version", document, 2)).content.decode()
    assert len(diff_lines(html)) == 5 and 'id="diff-cut"' in html


@pytest.mark.parametrize("address", ["node_version", "node_restore"])
def test_a_version_it_never_had_is_a_404(user_client, document, address):
    assert user_client.get(page_url(address, document, 9)).status_code == 404


def test_a_bad_against_is_a_400_and_one_it_never_had_a_404(user_client, document):
    assert user_client.get(page_url("node_version", document, 2) + "?against=x").status_code == 400
    response = user_client.get(page_url("node_version", document, 2) + "?against=7")
    assert response.status_code == 404 and "has no version 7" in response.content.decode()


def test_a_version_whose_one_before_is_no_longer_kept_is_shown_without_a_diff(user_client, document):
    NodeVersion.objects.filter(node=document, version=1).delete()
    html = user_client.get(page_url("node_version", document, 2)).content.decode()
    assert "The version before, 1, is no longer kept" in html and 'id="version-diff"' not in html


def test_a_folder_has_no_version_page(user_client, internal):
    assert user_client.get(page_url("node_version", NodeFactory(), 1)).status_code == 404


def test_a_restore_is_confirmed_on_a_page_that_posts_the_version_now(user_client, document):
    html = user_client.get(page_url("node_restore", document, 1)).content.decode()
    assert "Restore version 1 of" in html and "a new version, 4," in html
    form = re.search(r'<form method="post" action="([^"]+)"[^>]*>(.*?)</form>', html, re.S)
    assert form and form.group(1) == page_url("node_restore", document, 1)
    assert 'name="csrfmiddlewaretoken"' in form.group(2) and 'name="version" value="3"' in form.group(2)
    assert ("removed", "-&lt;script&gt;alert(1)&lt;/script&gt;") in diff_lines(html)  # what the restore undoes


def test_a_restore_writes_a_new_version_and_says_so(user_client, document):
    response = user_client.post(page_url("node_restore", document, 1), {"version": 3}, follow=True)
    assert response.redirect_chain[-1][0] == page_url("node_detail", document)
    assert "Restored version 1 of &#x27;plan.md&#x27; as version 4." in response.content.decode()
    restored = selectors.node_fresh(node=document)
    assert restored.version == 4 and selectors.node_content(node=restored) == b"one\ntwo\nthree\n"
    assert NodeEvent.objects.filter(node_id=document.pk).latest("id").restored_from == 1


def test_a_restore_at_a_stale_version_is_refused_on_its_page(user_client, document, user):
    services.node_content_set(node=document, data=b"meanwhile\n", by=acting(user))
    response = user_client.post(page_url("node_restore", document, 1), {"version": 3})
    assert response.status_code == 409
    html = response.content.decode()
    assert "it is at version 4, not 3" in html and 'name="version" value="4"' in html  # to confirm again
    assert selectors.node_content(node=document) == b"meanwhile\n"


def test_restoring_the_version_now_writes_nothing(user_client, document):
    html = user_client.get(page_url("node_restore", document, 3)).content.decode()
    assert "restoring it writes nothing" in html and page_url("node_restore", document, 3) not in html
    response = user_client.post(page_url("node_restore", document, 3), {"version": 3}, follow=True)
    assert "already reads as version 3 did" in response.content.decode()
    assert selectors.node_fresh(node=document).version == 3


def test_a_reader_may_not_restore(reader_client, document):
    assert reader_client.get(page_url("node_restore", document, 1)).status_code == 403
    assert reader_client.post(page_url("node_restore", document, 1), {"version": 3}).status_code == 403
    assert selectors.node_fresh(node=document).version == 3


def test_a_bad_version_field_is_a_400(user_client, document):
    response = user_client.post(page_url("node_restore", document, 1), {"version": "x"})
    assert response.status_code == 400 and selectors.node_fresh(node=document).version == 3
