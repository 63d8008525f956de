"""The import plan alone: pure logic, so these tests run without a database."""

import pytest

from memory.services.archive_formats import ArchiveEntry
from memory.services.archive_plan import ImportMode, ProjectNode, plan_import
from memsite.errors import Conflict

PROJECT = "memory_project"
NODES = [
    ProjectNode("src", PROJECT, "src", True, "folder"),
    ProjectNode("app", "src", "app.py", False, "project_file_bytes", "src/app.py", 3, "a" * 64, 0o644),
    ProjectNode("old", "src", "old", True, "folder"),
    ProjectNode("old-file", "old", "x.py", False, "project_file_bytes", "src/old/x.py", 1, "b" * 64, 0o644),
    ProjectNode("notes", PROJECT, "notes.md", False, "document"),
]


def entry(path: str, size: int | None = 1, mode: int | None = 0o644) -> ArchiveEntry:
    return ArchiveEntry(path=path, size=size, member=None, mode=None if size is None else mode)


def plan(mode: ImportMode, *entries: ArchiveEntry):
    return plan_import(project_id=PROJECT, nodes=NODES, entries=list(entries), mode=mode)


def test_replace_deletes_the_topmost_nodes_the_archive_does_not_name():
    result = plan(ImportMode.REPLACE, entry("src/app.py"), entry("src/lib", size=None))
    assert sorted(result.deletes) == ["notes", "old"]  # not old/x.py: it goes with its folder
    assert [(file.node.id, file.spec) for file in result.files] == [("app", None)]
    assert [(parent, [spec.name for spec in specs]) for parent, specs in result.creates] == [("src", ["lib"])]
    assert result.folders == 1


def test_new_branches_are_created_under_the_folders_that_exist():
    result = plan(ImportMode.MERGE, entry("src/new/a.py", mode=0o755), entry("top/b.py"))
    assert result.deletes == [] and result.folders == 2
    created = {parent: specs for parent, specs in result.creates}
    assert [spec.name for spec in created[PROJECT]] == ["top"]
    (new,) = created["src"]
    assert (new.name, new.type, [(c.name, c.mode, c.context) for c in new.children]) == (
        "new",
        "folder",
        [("a.py", 0o755, {"file_path": "src/new/a.py"})],
    )


@pytest.mark.parametrize("mode", [ImportMode.FAIL, ImportMode.MERGE])
def test_a_document_in_the_way_is_a_conflict_unless_replacing(mode):
    with pytest.raises(Conflict, match="notes.md"):
        plan(mode, entry("notes.md"))
    result = plan(ImportMode.REPLACE, entry("notes.md"))
    assert "notes" in result.deletes and result.files[0].spec.name == "notes.md"
