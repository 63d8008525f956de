import hashlib

import pytest

from memory import selectors
from memory.models import Node
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory
from tests.memory.api.support import tree_state, url
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db

BINARY = bytes(range(256)) + b"\x00\x00end\x00"


@pytest.fixture
def project_file(db):
    project = ProjectFactory()
    return NodeFactory(parent=project, type="project_file_bytes", name="data.bin", context={"file_path": "data.bin"})


def test_text_round_trip_through_a_document(api, internal):
    document = DocumentFactory(parent=internal["user"], name="notes.md")
    text = "# Notes\n\nÜnïcödé ✓ and a tab\t.\n".encode()
    put = api.put(url("node-content", document), data=text, content_type="text/markdown")
    assert put.status_code == 200, put.content
    assert put.json()["content_size"] == len(text) and put.json()["version"] == 2
    assert put["ETag"] == '"2"'

    got = api.get(url("node-content", document))
    assert got.status_code == 200
    assert got["Content-Type"] == "text/markdown; charset=utf-8"
    assert got.content == text
    assert got["ETag"] == '"2"'
    assert got["X-Content-SHA256"] == hashlib.sha256(text).hexdigest()


def test_bytes_round_trip_through_a_project_file(api, project_file):
    put = api.put(url("node-content", project_file), data=BINARY, content_type="application/octet-stream")
    assert put.status_code == 200, put.content
    assert put.json()["content_size"] == len(BINARY)
    got = api.get(url("node-content", project_file), HTTP_ACCEPT="application/octet-stream")
    assert got.status_code == 200
    assert got["Content-Type"] == "application/octet-stream"
    assert got.content == BINARY


@pytest.mark.parametrize("content_type", ["", "application/x-www-form-urlencoded", "image/png", "application/json"])
def test_the_body_is_stored_raw_whatever_its_content_type(api, project_file, content_type):
    body = b"a=1&b=\x00{not json"
    response = api.generic("PUT", url("node-content", project_file), data=body, content_type=content_type)
    assert response.status_code == 200, response.content
    assert selectors.node_content(node=project_file) == body


def test_an_empty_body_empties_the_content(api, project_file):
    api.put(url("node-content", project_file), data=b"something", content_type="application/octet-stream")
    response = api.put(
        url("node-content", project_file), data=b"", content_type="application/octet-stream", CONTENT_LENGTH="0"
    )
    assert response.status_code == 200
    assert response.json()["content_size"] == 0
    assert api.get(url("node-content", project_file)).content == b""


def test_a_document_must_be_utf8(api, internal):
    document = DocumentFactory(parent=internal["user"], name="notes.md")
    before = tree_state()
    response = api.put(url("node-content", document), data=b"\xff\xfe\x00bad", content_type="text/plain")
    assert response.status_code == 400
    assert "must be UTF-8 text" in response.json()["detail"]
    assert tree_state() == before


def test_folders_have_no_content(api, internal):
    folder = NodeFactory(name="logs")
    got = api.get(url("node-content", folder))
    assert got.status_code == 400
    assert "hold no content" in got.json()["detail"]
    before = tree_state()
    put = api.put(url("node-content", folder), data=b"x", content_type="text/plain")
    assert put.status_code == 400
    assert "hold no content" in put.json()["detail"]
    assert tree_state() == before


def test_oversize_content_is_a_413_and_changes_nothing(api, project_file, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 16
    api.put(url("node-content", project_file), data=b"small", content_type="application/octet-stream")
    before = tree_state()
    response = api.put(url("node-content", project_file), data=b"x" * 17, content_type="application/octet-stream")
    assert response.status_code == 413
    assert "17 bytes; the limit is 16 bytes" in response.json()["detail"]
    assert tree_state() == before
    at_limit = api.put(url("node-content", project_file), data=b"x" * 16, content_type="application/octet-stream")
    assert at_limit.status_code == 200


def test_the_content_length_header_alone_decides_413(api, project_file, settings):
    """A body announced as too big is refused before it is read."""
    settings.MEMSITE_MAX_CONTENT_BYTES = 100
    before = tree_state()
    response = api.put(
        url("node-content", project_file), data=b"tiny", content_type="application/octet-stream", CONTENT_LENGTH="5000"
    )
    assert response.status_code == 413
    assert "5000 bytes" in response.json()["detail"]
    assert tree_state() == before


def test_if_match_with_the_current_version_writes(api, project_file):
    response = api.put(
        url("node-content", project_file), data=b"v2", content_type="application/octet-stream", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 200
    assert selectors.node_content(node=project_file) == b"v2"


def test_if_match_with_a_stale_version_is_a_409(api, project_file):
    api.patch(url("node-detail", project_file), {"description": "changed"}, format="json")
    before = tree_state()
    response = api.put(
        url("node-content", project_file), data=b"late", content_type="application/octet-stream", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 409
    assert "version 2, not 1" in response.json()["detail"]
    assert tree_state() == before


def test_a_bad_if_match_is_a_400(api, project_file):
    before = tree_state()
    response = api.put(
        url("node-content", project_file), data=b"x", content_type="application/octet-stream", HTTP_IF_MATCH="yesterday"
    )
    assert response.status_code == 400
    assert "If-Match" in response.json()["detail"]
    assert tree_state() == before


def test_unknown_ids_are_404(api, internal):
    missing = "memory_" + "0" * 32
    assert api.get(url("node-content", missing)).status_code == 404
    before = tree_state()
    response = api.put(url("node-content", missing), data=b"x", content_type="application/octet-stream")
    assert response.status_code == 404
    assert tree_state() == before


def test_errors_are_json_even_when_bytes_were_asked_for(api, internal):
    response = api.get(url("node-content", "memory_nope"), HTTP_ACCEPT="application/octet-stream")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "No memory node" in response.json()["detail"]


def test_content_survives_a_rename(api, project_file):
    api.put(url("node-content", project_file), data=BINARY, content_type="application/octet-stream")
    api.patch(url("node-detail", project_file), {"name": "renamed.bin"}, format="json")
    assert Node.objects.get(pk=project_file.pk).name == "renamed.bin"
    assert api.get(url("node-content", project_file)).content == BINARY


def test_a_chunked_upload_without_length_is_refused_and_keeps_the_content(api, internal):
    document = DocumentFactory(parent=internal["user"], name="kept.md", content=b"# kept")
    response = api.put(
        url("node-content", document), data=b"# new", content_type="text/markdown", HTTP_TRANSFER_ENCODING="chunked"
    )
    assert response.status_code == 411 and "Content-Length" in response.json()["detail"]
    assert selectors.node_content(node=document) == b"# kept"


def test_content_sent_without_any_length_is_a_documented_411(api, internal):
    document = DocumentFactory(parent=internal["user"], name="kept.md", content=b"# kept")
    response = api.generic(
        "PUT", url("node-content", document), b"", content_type="application/x-yaml", CONTENT_LENGTH=""
    )
    assert response.status_code == 411
    assert_documented(response, "/api/nodes/{node_id}/content/", "put")
    assert selectors.node_content(node=document) == b"# kept"
