from datetime import date

import pytest

from memory.models import Node, Passage
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db


def test_renames_and_describes_a_node(api, internal):
    folder = NodeFactory(name="logs")
    response = api.patch(url("node-detail", folder), {"name": "run-logs", "description": "All runs"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["name"], body["description"], body["version"]) == ("run-logs", "All runs", 2)
    assert body["path"] == "/swarmstar/run-logs"
    assert response["ETag"] == '"2"'
    folder.refresh_from_db()
    assert (folder.name, folder.description, folder.version) == ("run-logs", "All runs", 2)


def test_retypes_a_folder_in_projects_into_a_project(api, internal):
    folder = NodeFactory(parent=internal["projects"], name="app")
    response = api.patch(url("node-detail", folder), {"type": "project_root_folder"}, format="json")
    assert response.status_code == 200, response.content
    assert Node.objects.get(pk=folder.pk).type == "project_root_folder"


def test_changes_the_context_of_a_project_file(api):
    project = ProjectFactory()
    file = NodeFactory(parent=project, type="project_file_bytes", name="a.py", context={"file_path": "a.py"})
    response = api.patch(url("node-detail", file), {"context": {"file_path": "src/a.py"}}, format="json")
    assert response.status_code == 200, response.content
    assert Node.objects.get(pk=file.pk).context == {"file_path": "src/a.py"}


def test_dates_a_node_and_takes_its_date_away(api):
    doc = DocumentFactory(description="Standup", content=b"Ana: the build is green.")
    dated = api.patch(url("node-detail", doc), {"date": "2023-05-08T09:30:00+02:00"}, format="json")
    assert dated.status_code == 200, dated.content
    assert (dated.json()["date"], dated.json()["version"]) == ("2023-05-08", 2)
    assert set(Passage.objects.filter(node=doc).values_list("date", flat=True)) == {date(2023, 5, 8)}

    cleared = api.patch(url("node-detail", doc), {"date": None}, format="json")
    assert (cleared.json()["date"], Node.objects.get(pk=doc.pk).date) == (None, None)
    assert set(Passage.objects.filter(node=doc).values_list("date", flat=True)) == {None}


@pytest.mark.parametrize("where", ["body", "header", "weak header"])
def test_the_current_version_lets_the_update_through(api, where):
    folder = NodeFactory(name="logs")
    body, headers = {"name": "new"}, {}
    if where == "body":
        body["version"] = 1
    else:
        headers["HTTP_IF_MATCH"] = '"1"' if where == "header" else 'W/"1"'
    response = api.patch(url("node-detail", folder), body, format="json", **headers)
    assert response.status_code == 200, response.content
    assert Node.objects.get(pk=folder.pk).name == "new"


@pytest.mark.parametrize("where", ["body", "header"])
def test_a_stale_version_is_a_409_and_changes_nothing(api, where):
    folder = NodeFactory(name="logs")
    api.patch(url("node-detail", folder), {"description": "someone else"}, format="json")
    before = tree_state()
    body, headers = {"name": "mine"}, {}
    if where == "body":
        body["version"] = 1
    else:
        headers["HTTP_IF_MATCH"] = '"1"'
    response = api.patch(url("node-detail", folder), body, format="json", **headers)
    assert response.status_code == 409
    assert "version 2, not 1" in response.json()["detail"]
    assert tree_state() == before


BAD_PATCHES = [
    ("nothing to change", {}, {}, 400, "Nothing to change"),
    ("only a version", {"version": 1}, {}, 400, "Nothing to change"),
    ("version as a string", {"name": "x", "version": "1"}, {}, 400, "Must be an integer"),
    ("version zero", {"name": "x", "version": 0}, {}, 400, "version"),
    ("name is a boolean", {"name": True}, {}, 400, "Must be a string"),
    ("name is null", {"name": None}, {}, 400, "may not be null"),
    ("unknown type", {"type": "blob"}, {}, 400, "Unknown memory type 'blob'"),
    ("folder into a document", {"type": "document"}, {}, 400, "cannot become a 'document'"),
    ("context is a list", {"context": []}, {}, 400, "context"),
    ("context a folder does not take", {"context": {"x": 1}}, {}, 400, "Invalid context for type 'folder'"),
    ("unknown field", {"parent": "memory_x"}, {}, 400, "Unknown field"),
    ("If-Match that is not a version", {"name": "x"}, {"HTTP_IF_MATCH": '"abc"'}, 400, "If-Match"),
    ("If-Match and body disagree", {"name": "x", "version": 1}, {"HTTP_IF_MATCH": '"2"'}, 400, "If-Match"),
    ("name with a slash", {"name": "a/b"}, {}, 400, "'/'"),
    ("date not ISO 8601", {"date": "8 May 2023"}, {}, 400, "Not an ISO 8601 date"),
    ("date as a number", {"date": 20230508}, {}, 400, "Must be a string"),
]


@pytest.mark.parametrize("label, body, headers, status, fragment", BAD_PATCHES, ids=[c[0] for c in BAD_PATCHES])
def test_bad_updates_are_refused_and_change_nothing(api, internal, label, body, headers, status, fragment):
    folder = NodeFactory(name="logs")
    before = tree_state()
    response = api.patch(url("node-detail", folder), body, format="json", **headers)
    assert response.status_code == status, response.content
    assert fragment in response.content.decode()
    assert tree_state() == before


def test_malformed_json_is_a_400(api):
    folder = NodeFactory(name="logs")
    before = tree_state()
    response = api.patch(url("node-detail", folder), data="{name: 'x'}", content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]
    assert tree_state() == before


def test_a_sibling_name_is_a_409(api):
    NodeFactory(name="taken")
    folder = NodeFactory(name="logs")
    before = tree_state()
    response = api.patch(url("node-detail", folder), {"name": "taken"}, format="json")
    assert response.status_code == 409
    assert "'taken' is already used" in response.json()["detail"]
    assert tree_state() == before


def test_an_unknown_id_is_a_404(api, internal):
    response = api.patch(url("node-detail", "memory_" + "f" * 32), {"name": "x"}, format="json")
    assert response.status_code == 404
    assert "No memory node with id" in response.json()["detail"]


@pytest.mark.parametrize(
    "body, fragment",
    [({"name": "me"}, "cannot be renamed"), ({"type": "folder"}, "cannot be renamed or retyped")],
    ids=["rename", "retype"],
)
def test_internal_folders_cannot_be_renamed_or_retyped(staff_api, internal, body, fragment):
    before = tree_state()
    response = staff_api.patch(url("node-detail", internal["user"]), body, format="json")
    assert response.status_code == 403
    assert fragment in response.json()["detail"]
    assert tree_state() == before


def test_only_staff_edit_the_description_of_an_internal_folder(api, staff_api, internal):
    before = tree_state()
    refused = api.patch(url("node-detail", internal["references"]), {"description": "mine"}, format="json")
    assert refused.status_code == 403
    assert "Only owners" in refused.json()["detail"]
    assert tree_state() == before

    allowed = staff_api.patch(url("node-detail", internal["references"]), {"description": "Curated"}, format="json")
    assert allowed.status_code == 200, allowed.content
    assert Node.objects.get(pk=internal["references"].pk).description == "Curated"


class TestDelete:
    def test_deletes_a_node_and_its_branch(self, api, internal):
        folder = NodeFactory(name="logs")
        DocumentFactory(parent=folder)
        NodeFactory(parent=NodeFactory(parent=folder))
        before = Node.objects.count()
        response = api.delete(url("node-detail", folder))
        assert response.status_code == 204
        assert Node.objects.count() == before - 4
        assert not Node.objects.filter(pk=folder.pk).exists()
        assert Node.objects.get(pk=internal["swarmstar"].pk).numchild == 0

    @pytest.mark.parametrize("name", ["swarmstar", "user", "projects", "references"])
    def test_internal_folders_cannot_be_deleted(self, staff_api, internal, name):
        before = tree_state()
        response = staff_api.delete(url("node-detail", internal[name]))
        assert response.status_code == 403
        assert "cannot be deleted" in response.json()["detail"]
        assert tree_state() == before

    def test_an_unknown_id_is_a_404(self, api, internal):
        before = tree_state()
        response = api.delete(url("node-detail", "memory_missing"))
        assert response.status_code == 404
        assert tree_state() == before


class TestMove:
    def test_moves_a_branch_to_the_end_of_another_folder(self, api, internal):
        existing = NodeFactory(parent=internal["references"], name="old")
        folder = NodeFactory(name="docs")
        child = DocumentFactory(parent=folder, name="a.md")
        response = api.post(url("node-move", folder), {"parent": internal["references"].id}, format="json")
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["parent"] == internal["references"].id and body["path"] == "/references/docs"
        assert body["version"] == 2 and body["children_ids"] == [child.id]
        references = api.get(url("node-detail", internal["references"])).json()
        assert references["children_ids"] == [existing.id, folder.id]
        assert api.get(url("node-detail", child)).json()["path"] == "/references/docs/a.md"
        assert Node.objects.find_problems() == ([], [], [], [], [])

    @pytest.mark.parametrize("target", ["itself", "child", "grandchild"])
    def test_moving_into_its_own_branch_is_a_409(self, api, internal, target):
        folder = NodeFactory(name="outer")
        child = NodeFactory(parent=folder, name="inner")
        grandchild = NodeFactory(parent=child, name="deepest")
        destination = {"itself": folder, "child": child, "grandchild": grandchild}[target]
        before = tree_state()
        response = api.post(url("node-move", folder), {"parent": destination.id}, format="json")
        assert response.status_code == 409
        assert "into itself or its own branch" in response.json()["detail"]
        assert tree_state() == before

    def test_a_name_taken_in_the_destination_is_a_409(self, api, internal):
        NodeFactory(parent=internal["references"], name="docs")
        folder = NodeFactory(name="docs")
        before = tree_state()
        response = api.post(url("node-move", folder), {"parent": internal["references"].id}, format="json")
        assert response.status_code == 409
        assert tree_state() == before

    def test_internal_folders_cannot_be_moved(self, staff_api, internal):
        before = tree_state()
        response = staff_api.post(
            url("node-move", internal["user"]), {"parent": internal["references"].id}, format="json"
        )
        assert response.status_code == 403
        assert "cannot be moved" in response.json()["detail"]
        assert tree_state() == before

    @pytest.mark.parametrize(
        "body, status, fragment",
        [
            ({}, 400, "parent"),
            ({"parent": 5}, 400, "Must be a string"),
            ({"parent": "memory_" + "0" * 32}, 404, "No memory node"),
            ({"parent": "x", "position": "first"}, 400, "Unknown field"),
        ],
        ids=["missing parent", "parent is a number", "unknown parent", "unknown field"],
    )
    def test_bad_moves_are_refused_and_change_nothing(self, api, internal, body, status, fragment):
        folder = NodeFactory(name="docs")
        before = tree_state()
        response = api.post(url("node-move", folder), body, format="json")
        assert response.status_code == status, response.content
        assert fragment in response.content.decode()
        assert tree_state() == before

    def test_moving_into_a_document_is_a_400(self, api, internal):
        folder = NodeFactory(name="docs")
        document = DocumentFactory()
        before = tree_state()
        response = api.post(url("node-move", folder), {"parent": document.id}, format="json")
        assert response.status_code == 400
        assert "is not a folder" in response.json()["detail"]
        assert tree_state() == before

    def test_an_unknown_node_is_a_404(self, api, internal):
        response = api.post(url("node-move", "memory_nope"), {"parent": internal["user"].id}, format="json")
        assert response.status_code == 404


def test_a_form_encoded_patch_is_a_415(api):
    folder = NodeFactory(name="logs")
    before = tree_state()
    response = api.patch(url("node-detail", folder), "name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert tree_state() == before
