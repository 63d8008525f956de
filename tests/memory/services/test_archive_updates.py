"""Updating a project from an archive: mode fail, merge or replace, all or nothing."""

import io

import pytest

from memory import selectors, services
from memory.models import Node, NodeEvent, Passage
from memory.rows import insert_rows
from memory.services import archives
from memsite.errors import Conflict, InvalidInput, TooLarge
from tests.archives import tar_gz, tar_members, tar_modes, zip_bytes, zip_with_central_field
from tests.factories import DocumentFactory, ProjectFactory, acting, default_space, system
from tests.memory.api.support import tree_state

pytestmark = pytest.mark.django_db

BEFORE = {
    "README.md": b"# demo\nold readme about herons\n",
    "src/app.py": b"print('app')\n",
    "src/util.py": b"def util(): ...\n",
    "docs/guide.md": b"# guide\n",
}


@pytest.fixture
def project(user):
    project = ProjectFactory(name="demo")
    archive = tar_gz(BEFORE, dirs=["assets/"], modes={"src/app.py": 0o755})
    services.project_import(project=project, archive=io.BytesIO(archive), by=acting(user))
    return project


def imported(project, user, blob, mode):
    return services.project_import(project=project, archive=io.BytesIO(blob), mode=mode, by=acting(user))


def at(path):
    return selectors.node_resolve(space=default_space(), path=f"/projects/demo/{path}")


def branch(project):
    """Every path under the project, folders ending in '/'."""
    nodes = selectors.node_subtree(node=project, include_self=False)
    return sorted(
        selectors.node_path(node=node).removeprefix("/projects/demo/") + ("/" if node.is_folder else "")
        for node in nodes
    )


def exported(project):
    return tar_members(services.project_export(project=project))


def test_fail_is_the_default_and_refuses_a_path_the_project_has(project, user):
    before = tree_state()
    with pytest.raises(Conflict, match="already has 'src/app.py'"):
        services.project_import(
            project=project,
            archive=io.BytesIO(tar_gz({"new.py": b"n", "src/app.py": b"x"})),
            by=acting(user),
        )
    with pytest.raises(Conflict, match="already has 'README.md'"):
        imported(project, user, tar_gz({"README.md": b"x"}), "fail")
    assert tree_state() == before


def test_merge_updates_the_files_it_holds_adds_the_new_and_keeps_the_rest(project, user):
    readme, app, util = at("README.md"), at("src/app.py"), at("src/util.py")
    result = imported(project, user, tar_gz({"README.md": b"new readme", "src/lib/new.py": b"n"}), "merge")
    assert (result.folders, result.files, result.updated, result.deleted) == (1, 1, 1, 0)
    assert exported(project) == {**BEFORE, "README.md": b"new readme", "src/lib/new.py": b"n"}
    assert "assets/" in branch(project)
    updated = at("README.md")
    assert (updated.pk, updated.version, updated.context) == (
        readme.pk,
        2,
        {"file_path": "README.md"},
    )
    assert at("src/app.py").version == app.version == 1 and at("src/util.py").version == util.version == 1


def test_merging_the_same_files_changes_no_version_and_a_new_mode_is_a_new_version(project, user):
    same = tar_gz(
        {"README.md": BEFORE["README.md"], "src/app.py": BEFORE["src/app.py"]},
        modes={"src/app.py": 0o755},
    )
    result = imported(project, user, same, "merge")
    assert (result.files, result.updated) == (0, 0)
    assert at("README.md").version == at("src/app.py").version == 1

    result = imported(project, user, tar_gz({"src/app.py": BEFORE["src/app.py"]}), "merge")  # 0644 now
    assert result.updated == 1
    assert (at("src/app.py").version, at("src/app.py").mode) == (2, 0o644)
    assert tar_modes(services.project_export(project=project))["src/app.py"] == 0o644


def test_replace_makes_the_project_exactly_the_archive(project, user):
    readme, app = at("README.md"), at("src/app.py")
    archive = tar_gz({"README.md": b"new readme", "src/app.py": BEFORE["src/app.py"], "lib/x.py": b"x"})
    result = imported(project, user, archive, "replace")
    # Gone: docs/ and its guide, the empty assets/, src/util.py.
    assert (result.folders, result.files, result.updated, result.deleted) == (1, 1, 2, 4)
    assert branch(project) == ["README.md", "lib/", "lib/x.py", "src/", "src/app.py"]
    assert exported(project) == {
        "README.md": b"new readme",
        "src/app.py": BEFORE["src/app.py"],
        "lib/x.py": b"x",
    }
    assert (at("README.md").pk, at("README.md").version) == (readme.pk, 2)
    # Same content, but the archive gives 0644 where the file was 0755.
    assert (at("src/app.py").pk, at("src/app.py").version, at("src/app.py").mode) == (
        app.pk,
        2,
        0o644,
    )
    assert Node.objects.filter(pk=project.pk).exists() and Node.objects.get(pk=project.pk).numchild == 3
    assert Node.objects.find_problems() == ([], [], [], [], [])


def test_replace_puts_a_file_where_a_folder_was_and_a_folder_where_a_file_was(project, user):
    result = imported(
        project,
        user,
        tar_gz({"docs": b"now a file", "README.md/index.md": b"now a folder"}),
        "replace",
    )
    assert result.deleted == 7  # README.md, docs/ with its guide, src/ with its two files, assets/
    assert branch(project) == ["README.md/", "README.md/index.md", "docs"]
    assert exported(project) == {"docs": b"now a file", "README.md/index.md": b"now a folder"}
    assert Node.objects.find_problems() == ([], [], [], [], [])


@pytest.mark.parametrize("mode", ["merge", "fail"])
@pytest.mark.parametrize(
    "files, message",
    [
        ({"docs": b"x"}, "'docs' is a folder in the project but a file in the archive"),
        (
            {"README.md/part.md": b"x"},
            "'README.md' is a file in the project but a folder in the archive",
        ),
        (
            {"src/app.py/main.py": b"x"},
            "'src/app.py' is a file in the project but a folder in the archive",
        ),
    ],
    ids=["file-over-folder", "folder-over-file", "nested-folder-over-file"],
)
def test_a_folder_against_a_file_is_a_conflict_naming_it(project, user, mode, files, message):
    if mode == "fail" and "docs" in files:
        message = "already has 'docs'"
    before = tree_state()
    with pytest.raises(Conflict, match=message):
        imported(project, user, tar_gz({"new.txt": b"n", **files}), mode)
    assert tree_state() == before


def test_merge_does_not_turn_a_document_into_a_project_file(project, user):
    DocumentFactory(parent=project, name="notes.md", content=b"# notes\n")
    before = tree_state()
    with pytest.raises(Conflict, match="'notes.md' is a document in the project but a file in the archive"):
        imported(project, user, tar_gz({"notes.md": b"x"}), "merge")
    assert tree_state() == before
    imported(project, user, tar_gz({"notes.md": b"x", **BEFORE}), "replace")
    assert at("notes.md").type == "project_file_bytes"


def test_merge_refuses_a_file_whose_file_path_is_elsewhere(project, user):
    """A file whose file_path is not its place in the tree: the archive's path names another."""
    services.node_create(
        parent=project,
        type="project_file_bytes",
        name="moved.py",
        context={"file_path": "lib/moved.py"},
        by=system(),
    )
    before = tree_state()
    with pytest.raises(Conflict, match="file at 'moved.py' has the file_path 'lib/moved.py'"):
        imported(project, user, tar_gz({"moved.py": b"x"}), "merge")
    with pytest.raises(Conflict, match="already has files at: lib/moved.py"):
        imported(project, user, tar_gz({"lib/moved.py": b"x"}), "merge")
    assert tree_state() == before


LAST = "zz/last.bin"


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_member_failing_half_way_leaves_the_project_as_it_was(project, user, mode, monkeypatch):
    """A file at a time: the update and the new file are written (and in replace the deletions
    made) before the last member turns out corrupt, and all of it is rolled back."""
    writes = []

    def counted(model, fields, rows, **kwargs) -> None:
        writes.append([row[0] for row in rows])
        insert_rows(model, fields, rows, **kwargs)

    monkeypatch.setattr(archives, "IMPORT_BYTES_PER_WRITE", 1)
    monkeypatch.setattr(archives, "insert_rows", counted)
    files = {"README.md": b"new readme", "new.py": b"n", LAST: bytes(range(256)) * 40}
    blob = zip_with_central_field(zip_bytes(files), LAST, "crc", 0)
    before, passages = (
        tree_state(),
        list(Passage.objects.order_by("pk").values_list("pk", "node_id", "text")),
    )
    with pytest.raises(InvalidInput, match="Bad CRC-32"):
        imported(project, user, blob, mode)
    assert len(writes) == 2 and writes[0] == [at("README.md").pk]
    assert tree_state() == before
    assert list(Passage.objects.order_by("pk").values_list("pk", "node_id", "text")) == passages
    assert exported(project) == BEFORE


def test_the_caps_hold_for_the_project_after_the_import(project, user, settings):
    settings.MEMSITE_ARCHIVE_MAX_FILES = 5
    before = tree_state()
    with pytest.raises(TooLarge, match="would hold 6 files after this import; the limit is 5"):
        imported(project, user, tar_gz({"a.py": b"", "b.py": b""}), "merge")
    with pytest.raises(TooLarge, match="would hold 6 files"):
        imported(project, user, tar_gz({"a.py": b"", "b.py": b""}), "fail")
    assert tree_state() == before
    imported(project, user, tar_gz({"a.py": b"", "README.md": b"updated, not added"}), "merge")
    imported(project, user, tar_gz({f"{name}.py": b"" for name in "abcde"}), "replace")
    assert len(exported(project)) == 5

    settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES = 1_000
    imported(project, user, tar_gz({"a.py": b"x" * 900}), "merge")
    with pytest.raises(TooLarge, match="would add up to 1001 bytes after this import; the limit is 1000"):
        imported(project, user, tar_gz({"b.py": b"x" * 101}), "merge")
    imported(project, user, tar_gz({"b.py": b"x" * 1_000}), "replace")  # a.py goes
    assert exported(project) == {"b.py": b"x" * 1_000}


def test_the_content_index_follows_the_update(project, user):
    readme, guide = at("README.md"), at("docs/guide.md")
    assert any("herons" in text for text in Passage.objects.filter(node=readme).values_list("text", flat=True))
    imported(project, user, tar_gz({"README.md": b"# demo\nnew readme about egrets\n"}), "merge")
    texts = list(Passage.objects.filter(node=readme).values_list("text", flat=True))
    assert any("egrets" in text for text in texts) and not any("herons" in text for text in texts)

    imported(project, user, tar_gz({"README.md": b"# demo\n"}), "replace")
    assert not Passage.objects.filter(node_id=guide.pk).exists()


def test_an_unknown_mode_is_refused(project, user):
    with pytest.raises(InvalidInput, match="Unknown import mode 'overwrite': use fail, merge or replace"):
        imported(project, user, tar_gz({"a.py": b""}), "overwrite")


def test_replace_deletes_more_branches_than_one_query_can_name(user):
    """Each file at the top is a branch of its own to delete; SQLite refuses an expression of a
    thousand of them in one query."""
    project = ProjectFactory(name="demo")
    many = {f"note{index}.txt": b"x" for index in range(1_100)}
    services.project_import(project=project, archive=io.BytesIO(tar_gz(many)), by=acting(user))

    result = imported(project, user, tar_gz({"kept.txt": b"kept"}), "replace")

    assert result.deleted == 1_100
    assert branch(project) == ["kept.txt"]
    assert NodeEvent.objects.filter(action=NodeEvent.Action.DELETE).count() == 1_100
