import io

import pytest

from memory import selectors
from memory.api.http import archive_body_limit
from memory.models import Node
from tests.archives import tar_gz, tar_members, zip_bytes
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, default_space
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db

FILES = {
    "README.md": b"# demo\n",
    "src/app.py": b"print('hi')\n",
    "src/pkg/data.bin": bytes(range(256)) * 4 + b"\x00",
    "docs/empty.txt": b"",
}


def upload(blob: bytes, name: str = "archive.tar.gz") -> io.BytesIO:
    handle = io.BytesIO(blob)
    handle.name = name
    return handle


@pytest.mark.parametrize("pack, filename", [(tar_gz, "src.tar.gz"), (zip_bytes, "src.zip")], ids=["tar.gz", "zip"])
def test_import_then_export_gives_back_the_same_bytes(api, user, pack, filename):
    project = ProjectFactory(name="demo app")
    response = api.post(url("project-import", project), {"archive": upload(pack(FILES), filename)}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"folders": 3, "files": 4, "updated": 0, "deleted": 0}
    node = selectors.node_resolve(space=default_space(), path="/projects/demo app/src/pkg/data.bin")
    assert node.type == "project_file_bytes" and node.context == {"file_path": "src/pkg/data.bin"}
    assert node.created_by == user

    exported = api.get(url("project-export", project))
    assert exported.status_code == 200
    assert exported["Content-Type"] == "application/gzip"
    assert exported["Content-Disposition"] == 'attachment; filename="demo app.tar.gz"'
    assert tar_members(exported.getvalue()) == FILES


def test_export_answers_a_client_that_accepts_only_gzip(api):
    project = ProjectFactory()
    response = api.get(url("project-export", project), HTTP_ACCEPT="application/gzip")
    assert response.status_code == 200
    assert tar_members(response.getvalue()) == {}


HOSTILE = [
    ("parent directory", lambda: tar_gz({"../evil.txt": b"x"}), 400, "'..'"),
    ("nested parent directory", lambda: zip_bytes({"a/../../evil.txt": b"x"}), 400, "'..'"),
    ("absolute path", lambda: tar_gz({"/etc/passwd": b"x"}), 400, "absolute"),
    ("tar symlink", lambda: tar_gz({"ok.txt": b"x"}, links={"link": "/etc/passwd"}), 400, "link"),
    ("zip symlink", lambda: zip_bytes({"ok.txt": b"x"}, symlinks={"link": "/etc/passwd"}), 400, "link"),
    ("not an archive", lambda: b"just some text", 400, "neither a .tar.gz nor a .zip"),
    ("corrupt gzip", lambda: b"\x1f\x8b" + b"\x00" * 40, 400, "not a readable .tar.gz"),
]


@pytest.mark.parametrize("label, build, status, fragment", HOSTILE, ids=[case[0] for case in HOSTILE])
def test_hostile_archives_are_refused_and_create_nothing(api, label, build, status, fragment):
    project = ProjectFactory()
    before = tree_state()
    response = api.post(url("project-import", project), {"archive": upload(build())}, format="multipart")
    assert response.status_code == status, response.content
    assert fragment in response.json()["detail"]
    assert tree_state() == before


@pytest.mark.parametrize("pack", [tar_gz, zip_bytes], ids=["tar.gz", "zip"])
def test_more_files_than_the_cap_is_a_413(api, settings, pack):
    settings.MEMSITE_ARCHIVE_MAX_FILES = 3
    project = ProjectFactory()
    before = tree_state()
    blob = pack({f"f{index}.txt": b"x" for index in range(4)})
    response = api.post(url("project-import", project), {"archive": upload(blob)}, format="multipart")
    assert response.status_code == 413
    assert "more than 3 files" in response.json()["detail"]
    assert tree_state() == before


def test_an_archive_over_the_size_cap_is_a_413(api, settings):
    blob = tar_gz({"big.bin": bytes(range(256)) * 64})
    settings.MEMSITE_ARCHIVE_MAX_BYTES = len(blob) - 1
    project = ProjectFactory()
    before = tree_state()
    response = api.post(url("project-import", project), {"archive": upload(blob)}, format="multipart")
    assert response.status_code == 413
    assert f"the limit is {len(blob) - 1} bytes" in response.json()["detail"]
    assert tree_state() == before


def test_an_upload_announced_far_over_the_cap_is_refused_before_parsing(api, settings):
    settings.MEMSITE_ARCHIVE_MAX_BYTES = 10
    project = ProjectFactory()
    before = tree_state()
    response = api.post(
        url("project-import", project),
        {"archive": upload(tar_gz({"a.txt": b"a"}))},
        format="multipart",
        CONTENT_LENGTH=str(10 * 1024 * 1024),
    )
    assert response.status_code == 413
    assert response.json()["detail"].endswith(f"the limit is {archive_body_limit()} bytes.")
    assert tree_state() == before


def test_a_file_that_exists_is_a_409_and_nothing_is_created(api):
    project = ProjectFactory()
    api.post(url("project-import", project), {"archive": upload(tar_gz({"a.py": b"1"}))}, format="multipart")
    before = tree_state()
    response = api.post(
        url("project-import", project),
        {"archive": upload(tar_gz({"new.py": b"n", "a.py": b"2"}))},
        format="multipart",
    )
    assert response.status_code == 409
    assert tree_state() == before
    assert tar_members(api.get(url("project-export", project)).getvalue()) == {"a.py": b"1"}


def test_import_needs_the_archive_field(api):
    project = ProjectFactory()
    before = tree_state()
    response = api.post(url("project-import", project), {"note": "no file"}, format="multipart")
    assert response.status_code == 400
    assert "Unknown field" in response.json()["note"][0]
    response = api.post(url("project-import", project), {}, format="multipart")
    assert response.status_code == 400
    assert response.json()["archive"] == ["No file was submitted."]
    response = api.post(url("project-import", project), {"archive": "not a file"}, format="multipart")
    assert response.status_code == 400
    assert "archive" in response.json()
    assert tree_state() == before


def test_import_refuses_json(api):
    project = ProjectFactory()
    response = api.post(url("project-import", project), {"archive": "a.tar.gz"}, format="json")
    assert response.status_code == 415


def test_import_only_into_a_project(api, internal):
    folder = NodeFactory(name="not-a-project")
    before = tree_state()
    response = api.post(url("project-import", folder), {"archive": upload(tar_gz({"a": b"a"}))}, format="multipart")
    assert response.status_code == 400
    assert "not a project root" in response.json()["detail"]
    assert tree_state() == before


def test_export_only_of_a_project(api, internal):
    document = DocumentFactory()
    response = api.get(url("project-export", document))
    assert response.status_code == 400
    assert "not a project root" in response.json()["detail"]


def test_unknown_projects_are_404(api, internal):
    count = Node.objects.count()
    assert api.get(url("project-export", "memory_nope")).status_code == 404
    response = api.post(
        url("project-import", "memory_nope"), {"archive": upload(tar_gz({"a": b"a"}))}, format="multipart"
    )
    assert response.status_code == 404
    assert Node.objects.count() == count


def test_merge_updates_a_file_with_a_new_version_and_mode(api):
    project = ProjectFactory(name="demo app")
    api.post(url("project-import", project), {"archive": upload(tar_gz(FILES))}, format="multipart")
    node = selectors.node_resolve(space=default_space(), path="/projects/demo app/src/app.py")
    assert api.get(url("node-detail", node)).json()["mode"] == "0644"

    files = {"src/app.py": b"print('bye')\n", "src/cli.py": b"x"}
    blob = tar_gz(files, modes={"src/app.py": 0o755})
    response = api.post(
        url("project-import", project),
        {"archive": upload(blob), "mode": "merge"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json() == {"folders": 0, "files": 1, "updated": 1, "deleted": 0}
    detail = api.get(url("node-detail", node))
    assert detail["ETag"] == '"2"' and detail.json()["mode"] == "0755"
    assert tar_members(api.get(url("project-export", project)).getvalue()) == {**FILES, **files}


def test_replace_deletes_what_the_archive_does_not_hold(api):
    project = ProjectFactory(name="demo app")
    blob = zip_bytes(FILES)
    api.post(url("project-import", project), {"archive": upload(blob)}, format="multipart")
    response = api.post(
        url("project-import", project),
        {"archive": upload(tar_gz({"README.md": b"# demo\n"})), "mode": "replace"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    # src/ with app.py, pkg/ and data.bin; docs/ with empty.txt. README.md is the same bytes.
    assert response.json() == {"folders": 0, "files": 0, "updated": 1, "deleted": 6}
    exported = api.get(url("project-export", project)).getvalue()
    assert tar_members(exported) == {"README.md": b"# demo\n"}


def test_merge_refuses_a_file_over_a_folder_with_a_409_and_changes_nothing(api):
    project = ProjectFactory()
    api.post(url("project-import", project), {"archive": upload(tar_gz(FILES))}, format="multipart")
    before = tree_state()
    response = api.post(
        url("project-import", project),
        {"archive": upload(tar_gz({"README.md": b"new", "src/pkg": b"a file"})), "mode": "merge"},
        format="multipart",
    )
    assert response.status_code == 409
    assert response.json()["detail"] == ("'src/pkg' is a folder in the project but a file in the archive.")
    assert tree_state() == before


def test_an_unknown_mode_is_a_400(api):
    project = ProjectFactory()
    before = tree_state()
    response = api.post(
        url("project-import", project),
        {"archive": upload(tar_gz({"a": b"a"})), "mode": "overwrite"},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["mode"] == ['"overwrite" is not a valid choice.']
    assert tree_state() == before
