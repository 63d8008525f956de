import base64
from datetime import date

import pytest

from memory import selectors
from memory.models import Node
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, default_space
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db


def test_creates_a_folder_and_answers_with_the_node(api, user, internal):
    response = api.post(
        url("node-create"),
        {"parent": internal["swarmstar"].id, "type": "folder", "name": "logs", "description": "Run logs"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    node = Node.objects.get(pk=body["id"])
    assert body["id"].startswith("memory_") and node.parent_id == internal["swarmstar"].id
    assert body == {
        "id": node.id,
        "name": "logs",
        "type": "folder",
        "is_folder": True,
        "description": "Run logs",
        "context": {},
        "parent": internal["swarmstar"].id,
        "path": "/swarmstar/logs",
        "children_ids": [],
        "child_count": 0,
        "content_size": None,
        "created_at": body["created_at"],
        "updated_at": body["updated_at"],
        "version": 1,
        "created_by": user.username,
        "mode": None,
        "date": None,
    }
    assert response["Location"] == url("node-detail", node)
    assert response["ETag"] == '"1"'


def test_creates_a_document_with_text_content(api, internal):
    text = "# Preferences\n\nLikes tea. Ünïcode ✓\n"
    response = api.post(
        url("node-create"),
        {"parent": internal["user"].id, "type": "document", "name": "conversation-notes.md", "content": text},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["path"] == "/user/conversation-notes.md"
    assert body["content_size"] == len(text.encode())
    assert selectors.node_content(node=Node.objects.get(pk=body["id"])) == text.encode()


def test_creates_a_dated_document_whose_passages_carry_the_date(api, internal):
    body = {"parent": internal["user"].id, "type": "document", "name": "standup.md", "content": "Ana: green."}
    response = api.post(url("node-create"), {**body, "date": "2023-05-08"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["date"] == "2023-05-08"
    node = Node.objects.get(pk=response.json()["id"])
    assert node.date == date(2023, 5, 8) and {p.date for p in node.passages.all()} == {date(2023, 5, 8)}


def test_creates_a_project_file_from_base64(api):
    project = ProjectFactory()
    data = b"\x00\x01binary\xff\x00"
    response = api.post(
        url("node-create"),
        {
            "parent": project.id,
            "type": "project_file_bytes",
            "name": "blob.bin",
            "context": {"file_path": "./data/blob.bin"},
            "content_base64": base64.b64encode(data).decode(),
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["context"] == {"file_path": "data/blob.bin"}
    assert body["content_size"] == len(data)
    assert body["mode"] == "0644"  # a project file made by the API has the default mode
    assert selectors.node_content(node=Node.objects.get(pk=body["id"])) == data


def test_the_new_node_is_the_last_child_of_its_parent(api, internal):
    first = NodeFactory(name="first")
    response = api.post(
        url("node-create"), {"parent": internal["swarmstar"].id, "type": "folder", "name": "second"}, format="json"
    )
    assert response.status_code == 201
    detail = api.get(url("node-detail", internal["swarmstar"])).json()
    assert detail["children_ids"] == [first.id, response.json()["id"]]


def swarmstar_id() -> str:
    return selectors.node_internal_folder(space=default_space(), name="swarmstar").id


BAD_BODIES = [
    # (label, body builder, expected status, fragment of the answer)
    ("missing name", lambda: {"parent": swarmstar_id(), "type": "folder"}, 400, "name"),
    ("missing parent", lambda: {"type": "folder", "name": "x"}, 400, "parent"),
    ("missing type", lambda: {"parent": swarmstar_id(), "name": "x"}, 400, "type"),
    ("name is a number", lambda: {"parent": swarmstar_id(), "type": "folder", "name": 7}, 400, "Must be a string"),
    (
        "date with no day",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "date": "2023-05"},
        400,
        "ISO 8601",
    ),
    ("parent is a list", lambda: {"parent": [swarmstar_id()], "type": "folder", "name": "x"}, 400, "parent"),
    (
        "context is a string",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "context": "{}"},
        400,
        "context",
    ),
    (
        "context is null",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "context": None},
        400,
        "context",
    ),
    (
        "context has fields a folder does not take",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "context": {"file_path": "a"}},
        400,
        "Invalid context for type 'folder'",
    ),
    (
        "unknown memory type",
        lambda: {"parent": swarmstar_id(), "type": "blob", "name": "x"},
        400,
        "Unknown memory type 'blob'",
    ),
    ("unknown parent", lambda: {"parent": "memory_" + "0" * 32, "type": "folder", "name": "x"}, 404, "No memory node"),
    ("empty name", lambda: {"parent": swarmstar_id(), "type": "folder", "name": "  "}, 400, "must not be empty"),
    ("name with a slash", lambda: {"parent": swarmstar_id(), "type": "folder", "name": "a/b"}, 400, "'/'"),
    (
        "unknown field",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "colour": "red"},
        400,
        "Unknown field",
    ),
    (
        "content for a folder",
        lambda: {"parent": swarmstar_id(), "type": "folder", "name": "x", "content": "hi"},
        400,
        "hold no content",
    ),
    (
        "content and content_base64 together",
        lambda: {
            "parent": swarmstar_id(),
            "type": "document",
            "name": "x.md",
            "content": "a",
            "content_base64": "YQ==",
        },
        400,
        "not both",
    ),
    (
        "content_base64 that is not base64",
        lambda: {"parent": swarmstar_id(), "type": "document", "name": "x.md", "content_base64": "@@@"},
        400,
        "base64",
    ),
    (
        "an internal folder",
        lambda: {"parent": swarmstar_id(), "type": "internal_folder", "name": "x"},
        403,
        "Internal folders",
    ),
    (
        "a project outside projects",
        lambda: {"parent": swarmstar_id(), "type": "project_root_folder", "name": "p"},
        400,
        "'projects' folder",
    ),
    (
        "a project file outside a project",
        lambda: {"parent": swarmstar_id(), "type": "project_file_bytes", "name": "f", "context": {"file_path": "f"}},
        400,
        "inside a project_root_folder",
    ),
    (
        "a list instead of an object",
        lambda: [{"parent": swarmstar_id(), "type": "folder", "name": "x"}],
        400,
        "dictionary",
    ),
]


@pytest.mark.parametrize("label, build, status, fragment", BAD_BODIES, ids=[case[0] for case in BAD_BODIES])
def test_bad_input_is_refused_and_changes_nothing(api, internal, label, build, status, fragment):
    NodeFactory(name="existing")
    before = tree_state()
    response = api.post(url("node-create"), build(), format="json")
    assert response.status_code == status, response.content
    assert fragment in response.content.decode()
    assert tree_state() == before


def test_malformed_json_is_a_400(api, internal):
    before = tree_state()
    response = api.post(url("node-create"), data='{"parent": "x", ', content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]
    assert tree_state() == before


def test_a_form_body_is_refused_with_415(api, internal):
    response = api.post(url("node-create"), {"parent": internal["swarmstar"].id, "type": "folder", "name": "x"})
    assert response.status_code == 415
    assert not Node.objects.filter(name="x").exists()


def test_duplicate_sibling_name_is_a_409(api, internal):
    NodeFactory(name="taken")
    before = tree_state()
    response = api.post(
        url("node-create"), {"parent": internal["swarmstar"].id, "type": "folder", "name": "taken"}, format="json"
    )
    assert response.status_code == 409
    assert "already has a child named 'taken'" in response.json()["detail"]
    assert tree_state() == before


def test_a_document_is_not_a_folder(api):
    document = DocumentFactory()
    before = tree_state()
    response = api.post(url("node-create"), {"parent": document.id, "type": "folder", "name": "x"}, format="json")
    assert response.status_code == 400
    assert "is not a folder" in response.json()["detail"]
    assert tree_state() == before


def test_oversize_content_is_a_413(api, internal, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 10
    before = tree_state()
    response = api.post(
        url("node-create"),
        {"parent": internal["user"].id, "type": "document", "name": "big.md", "content": "x" * 11},
        format="json",
    )
    assert response.status_code == 413
    assert "limit is 10 bytes" in response.json()["detail"]
    assert tree_state() == before


def test_invalid_project_file_context_names_the_field(api):
    project = ProjectFactory()
    before = tree_state()
    response = api.post(
        url("node-create"),
        {"parent": project.id, "type": "project_file_bytes", "name": "f", "context": {"file_path": "../x"}},
        format="json",
    )
    assert response.status_code == 400
    assert "file_path" in response.json()["detail"] and ".." in response.json()["detail"]
    assert tree_state() == before


def test_a_json_body_announced_larger_than_any_valid_request_is_a_413(api, internal, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 10
    before = tree_state()
    response = api.post(
        url("node-create"),
        {"parent": internal["user"].id, "type": "folder", "name": "x"},
        format="json",
        CONTENT_LENGTH=str(6 * 10 + 1024 * 1024 + 1),
    )
    assert response.status_code == 413
    assert "request body" in response.json()["detail"]
    assert tree_state() == before


def test_base64_content_at_the_cap_is_accepted(api, settings):
    """Base64 is a third larger than the bytes it carries; the JSON body limit allows for that."""
    settings.MEMSITE_MAX_CONTENT_BYTES = 3000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 3000 + 100
    project = ProjectFactory()
    data = bytes(range(256)) * 11 + b"\x00" * 184
    assert len(data) == 3000
    response = api.post(
        url("node-create"),
        {
            "parent": project.id,
            "type": "project_file_bytes",
            "name": "big.bin",
            "context": {"file_path": "big.bin"},
            "content_base64": base64.b64encode(data).decode(),
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert selectors.node_content(node=Node.objects.get(pk=response.json()["id"])) == data


def test_deeply_nested_json_is_a_clear_400(api, internal):
    before = tree_state()
    nested = "[" * 50_000 + "]" * 50_000
    body = f'{{"parent": "{internal["swarmstar"].id}", "type": "folder", "name": "deep", "context": {nested}}}'
    response = api.generic("POST", url("node-create"), body, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    assert tree_state() == before


def seed_shaped(parent, **fields):
    """A node as seed 000's MemoryMetadata dumps it."""
    return {
        "id": "memory_1b4e28ba-2fa1-41d2-883f-0016d3cca427",
        "is_folder": False,
        "type": "document",
        "name": "plan.md",
        "description": "The plan",
        "parent": parent.id,
        "children_ids": None,
        "context": {},
        **fields,
    }


def test_takes_seed_000s_node_shape_and_keeps_its_id(api, internal):
    response = api.post(url("node-create"), seed_shaped(internal["swarmstar"]), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["id"] == "memory_1b4e28ba2fa141d2883f0016d3cca427"
    assert body["is_folder"] is False and body["children_ids"] == []
    node = Node.objects.get(pk=body["id"])
    assert (node.name, node.parent_id, node.type) == ("plan.md", internal["swarmstar"].id, "document")


def test_a_folder_in_seed_000s_shape_with_empty_children(api, internal):
    shaped = seed_shaped(internal["swarmstar"], type="folder", name="logs", is_folder=True, children_ids=[])
    response = api.post(url("node-create"), shaped, format="json")
    assert response.status_code == 201, response.content
    assert Node.objects.get(pk=response.json()["id"]).is_folder


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"is_folder": True}, "is_folder", "is not a folder"),
        ({"type": "folder", "is_folder": False}, "is_folder", "is a folder"),
        ({"children_ids": ["memory_x"]}, "children_ids", "created without children"),
        ({"id": "n1_m3"}, "id", "32 hex digits"),
        ({"is_folder": "yes"}, "is_folder", "true or false"),
    ],
)
def test_refuses_a_seed_000_shape_that_contradicts_itself(api, internal, fields, field, message):
    before = tree_state()
    response = api.post(url("node-create"), seed_shaped(internal["swarmstar"], **fields), format="json")
    assert response.status_code == 400, response.content
    assert message in str(response.json()), response.json()
    assert field in str(response.json())
    assert tree_state() == before


def test_a_taken_id_is_a_conflict_and_a_retry_makes_no_second_node(api, internal):
    shaped = seed_shaped(internal["swarmstar"])
    assert api.post(url("node-create"), shaped, format="json").status_code == 201
    before = tree_state()
    retried = api.post(url("node-create"), {**shaped, "name": "other.md"}, format="json")
    assert retried.status_code == 409, retried.content
    assert "memory_1b4e28ba2fa141d2883f0016d3cca427" in retried.json()["detail"]
    assert tree_state() == before
