import re
from contextlib import ExitStack
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from memory import selectors
from memory.views import EDITOR_MAX_BYTES, editor_body_limit
from memsite.limits import wait_slots
from memsite.spaces.logic import Role
from tests.factories import DocumentFactory, NodeFactory, UserFactory, default_space
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db


@pytest.fixture
def preferences(internal):
    return selectors.node_resolve(space=default_space(), path="/user/user_preferences.md")


def save(client, node, content, version, **extra):
    return client.post(
        reverse("memory:document_save", args=[node.pk]), {"content": content, "version": version}, **extra
    )


def test_the_page_opens_user_preferences_and_lists_the_user_documents(user_client, preferences):
    response = user_client.get(reverse("memory:user_preferences"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "# User preferences" in html  # the textarea holds the markdown
    assert "<h1>User preferences</h1>" in html  # the preview renders it
    for name in ("user_preferences.md", "requested_features.md", "user_requirements.md"):
        assert name in html
    assert f'name="version" id="document-version" value="{preferences.version}"' in html
    assert 'hx-trigger="input changed delay:300ms"' in html  # a paste by mouse too, not only keys


def test_a_reader_reads_the_user_documents_without_an_editor(client, preferences):
    client.force_login(UserFactory(role=Role.READER))
    html = client.get(reverse("memory:user_preferences")).content.decode()
    assert "<h1>User preferences</h1>" in html  # the document, rendered
    assert "<textarea" not in html and reverse("memory:document_save", args=[preferences.pk]) not in html
    assert "editors of the space change it" in html


def test_a_user_document_too_large_for_the_editor_says_so(user_client, internal):
    big = DocumentFactory(parent=internal["user"], name="big.md", content=b"x" * (EDITOR_MAX_BYTES + 1))
    html = user_client.get(reverse("memory:user_preferences"), {"doc": big.pk}).content.decode()
    assert "the editor opens documents of up to" in html and "<textarea" not in html
    assert "user_preferences.md" in html  # the other tabs are still there


def test_another_document_is_chosen_by_its_tab(user_client, internal):
    features = selectors.node_resolve(space=default_space(), path="/user/requested_features.md")
    html = user_client.get(reverse("memory:user_preferences"), {"doc": features.pk}).content.decode()
    assert reverse("memory:document_save", args=[features.pk]) in html
    assert "# Requested features" in html


def test_folders_in_the_user_folder_are_not_tabs(user_client, internal):
    NodeFactory(parent=internal["user"], name="conversations")
    DocumentFactory(parent=internal["user"], name="background.md")
    html = user_client.get(reverse("memory:user_preferences")).content.decode()
    assert "background.md" in html and "conversations" not in html


def test_the_preview_partial_drops_remote_images(user_client):
    response = user_client.post(
        reverse("memory:markdown_preview"), {"content": "![x](https://evil.example/x.png)"}, **HTMX
    )
    assert response.status_code == 200 and "<img" not in response.content.decode()


def test_the_editor_saves_a_non_ascii_document_at_the_content_cap(user_client, preferences, settings):
    """The editor posts form-encoded, where each byte of "é" is "%XX": the body is three times
    the content, more than any other form may send, and still read and saved."""
    settings.MEMSITE_MAX_CONTENT_BYTES = 2 * 1024 * 1024
    text = "é" * (settings.MEMSITE_MAX_CONTENT_BYTES // 2)
    body = urlencode({"csrfmiddlewaretoken": "x" * 64, "version": preferences.version, "content": text})
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE < len(body) <= editor_body_limit()
    url = reverse("memory:document_save", args=[preferences.pk])
    response = user_client.post(url, body, content_type="application/x-www-form-urlencoded", **HTMX)
    assert response.status_code == 200 and "Saved." in response.content.decode()
    assert selectors.node_content(node=preferences) == text.encode()


def preview(client, content: str, **extra):
    return client.post(reverse("memory:markdown_preview"), {"content": content, **extra}, **HTMX)


def test_the_preview_takes_a_quarter_of_a_mib_at_most(user_client, settings):
    assert settings.MEMSITE_PREVIEW_MAX_BYTES == 256 * 1024
    response = preview(user_client, "# Big\n\n" + "x" * settings.MEMSITE_PREVIEW_MAX_BYTES)
    assert response.status_code == 413
    assert f"the limit is {settings.MEMSITE_PREVIEW_MAX_BYTES} bytes" in response.content.decode()


def test_the_preview_says_when_the_editor_sent_only_the_start(user_client):
    assert "start of the text only" not in preview(user_client, "# Whole").content.decode()
    html = preview(user_client, "# Start", cut="1").content.decode()
    assert "<h1>Start</h1>" in html and "The preview shows the start of the text only." in html


def test_the_preview_is_busy_when_no_slot_for_waiting_is_free(user_client):
    slots = wait_slots()
    with ExitStack() as stack:
        assert all(stack.enter_context(slots.hold()) for _ in range(slots.size))
        response = preview(user_client, "# Hi")
    assert response.status_code == 429 and response.content.decode().startswith("Busy")
    assert int(response["Retry-After"]) > 0
    assert preview(user_client, "# Hi").status_code == 200  # the slots given back, it renders again


def test_the_editor_tells_its_script_how_much_a_preview_may_send(user_client, preferences, settings):
    html = user_client.get(reverse("memory:user_preferences")).content.decode()
    budget = int(re.search(r'data-preview-bytes="(\d+)"', html)[1])
    assert 0 < budget < settings.MEMSITE_PREVIEW_MAX_BYTES - 1024  # room for the form's other fields


def test_the_preview_partial_renders_and_sanitizes(user_client):
    response = user_client.post(
        reverse("memory:markdown_preview"),
        {"content": "## Hi\n\n<script>alert(1)</script><img src=x onerror=alert(1)>"},
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "<h2>Hi</h2>" in html and "<script" not in html and "onerror" not in html


def test_saving_stores_the_content_and_says_saved(user_client, preferences):
    response = save(user_client, preferences, "# Prefs\n\nAsk me before deploying.\n", preferences.version, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Saved." in html and "<html" not in html
    assert selectors.node_content(node=preferences) == b"# Prefs\n\nAsk me before deploying.\n"
    # the editor's version moves on, so the next save is not a conflict
    assert f'id="document-version" value="{preferences.version + 1}" hx-swap-oob="true"' in html
    assert save(user_client, preferences, "again", preferences.version + 1, **HTMX).status_code == 200


def test_saving_keeps_leading_newlines_and_whitespace(user_client, preferences):
    save(user_client, preferences, "\n\n  indented\n", preferences.version, **HTMX)
    assert selectors.node_content(node=preferences) == b"\n\n  indented\n"
    html = user_client.get(reverse("memory:user_preferences")).content.decode()
    assert ">\n\n\n  indented\n</textarea>" in html  # one newline after the tag is dropped by browsers


def test_a_stale_version_is_a_conflict(user_client, preferences):
    save(user_client, preferences, "first", preferences.version, **HTMX)
    response = save(user_client, preferences, "second", preferences.version, **HTMX)
    assert response.status_code == 409
    assert "changed by someone else" in response.content.decode()
    assert selectors.node_content(node=preferences) == b"first"


def test_saving_without_htmx_redirects_back_with_a_message(user_client, preferences):
    response = save(user_client, preferences, "plain", preferences.version)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('memory:user_preferences')}?doc={preferences.pk}"
    assert "Saved." in user_client.get(response["Location"]).content.decode()


def test_saving_content_into_a_folder_is_refused(user_client, internal):
    folder = NodeFactory(parent=internal["user"], name="notes")
    response = save(user_client, folder, "text", folder.version, **HTMX)
    assert response.status_code == 400 and "hold no content" in response.content.decode()


def test_saving_content_into_an_internal_folder_is_forbidden(user_client, internal):
    folder = internal["user"]
    response = save(user_client, folder, "text", folder.version, **HTMX)
    assert response.status_code == 403 and "holds no content" in response.content.decode()


def test_stored_xss_in_the_preferences_is_escaped(user_client, preferences):
    save(user_client, preferences, "</textarea><script>alert(1)</script>", preferences.version, **HTMX)
    html = user_client.get(reverse("memory:user_preferences")).content.decode().split("<body", 1)[1]
    assert "<script>" not in html and "&lt;/textarea&gt;&lt;script&gt;" in html
