import io

import pytest

from memory import selectors, services
from memory.models import Node
from memsite.errors import Conflict, InvalidInput, TooLarge
from tests.archives import tar_gz, tar_members, zip_bytes
from tests.factories import NodeFactory, ProjectFactory, acting, default_space

pytestmark = pytest.mark.django_db

FILES = {
    "README.md": b"# demo\n",
    "src/app.py": b"print('hi')\n",
    "src/pkg/data.bin": bytes(range(256)) * 4,
    "docs/empty.txt": b"",
}


@pytest.mark.parametrize("pack", [tar_gz, zip_bytes], ids=["tar.gz", "zip"])
def test_import_then_export_gives_the_same_bytes(user, pack):
    project = ProjectFactory()
    result = services.project_import(project=project, archive=io.BytesIO(pack(FILES)), by=acting(user))
    assert (result.folders, result.files) == (3, 4)
    node = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/src/pkg/data.bin")
    assert node.type == "project_file_bytes" and node.context == {"file_path": "src/pkg/data.bin"}
    assert tar_members(services.project_export(project=project)) == FILES
    assert Node.objects.find_problems() == ([], [], [], [], [])


def test_import_reuses_existing_folders_and_creates_empty_ones(user):
    project = ProjectFactory()
    services.project_import(project=project, archive=io.BytesIO(tar_gz({"src/a.py": b"a"})), by=acting(user))
    services.project_import(
        project=project, archive=io.BytesIO(tar_gz({"src/b.py": b"b"}, dirs=["assets/"])), by=acting(user)
    )
    src = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/src")
    assert [n.name for n in selectors.node_children(node=src)] == ["a.py", "b.py"]
    assert selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/assets").is_folder


def test_importing_an_existing_path_is_a_conflict_and_creates_nothing(user):
    project = ProjectFactory()
    services.project_import(project=project, archive=io.BytesIO(tar_gz({"a.py": b"1"})), by=acting(user))
    before = Node.objects.count()
    with pytest.raises(Conflict, match="already has 'a.py'"):
        services.project_import(
            project=project, archive=io.BytesIO(tar_gz({"new.py": b"n", "a.py": b"2"})), by=acting(user)
        )
    assert Node.objects.count() == before
    assert tar_members(services.project_export(project=project)) == {"a.py": b"1"}


@pytest.mark.parametrize(
    "blob, message",
    [
        (tar_gz({"../escape.py": b"x"}), "no '..'"),
        (tar_gz({"/etc/passwd": b"x"}), "must be relative"),
        (tar_gz({"ok.py": b"x"}, links={"link": "/etc/passwd"}), "link or device"),
        (zip_bytes({"a/../../b.py": b"x"}), "no '..'"),
        (zip_bytes({"ok.py": b"x"}, symlinks={"link": "/etc"}), "link or device"),
        (tar_gz({"a": b"x", "a/b": b"y"}), "uses the file 'a' as a folder"),
        (b"just some text", "neither a .tar.gz nor a .zip"),
        (b"\x1f\x8bgarbage", "not a readable .tar.gz"),
    ],
    ids=["dotdot", "absolute", "symlink", "zip-dotdot", "zip-symlink", "file-as-folder", "not-archive", "corrupt"],
)
def test_hostile_archives_are_refused_and_create_nothing(user, blob, message):
    project = ProjectFactory()
    before = Node.objects.count()
    with pytest.raises(InvalidInput, match=message):
        services.project_import(project=project, archive=io.BytesIO(blob), by=acting(user))
    assert Node.objects.count() == before


def test_caps_on_file_count_and_sizes(user, settings):
    project = ProjectFactory()
    settings.MEMSITE_ARCHIVE_MAX_FILES = 2
    with pytest.raises(TooLarge, match="more than 2 files"):
        services.project_import(
            project=project, archive=io.BytesIO(tar_gz({"a": b"", "b": b"", "c": b""})), by=acting(user)
        )
    settings.MEMSITE_ARCHIVE_MAX_FILES = 100
    settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES = 1000
    bomb = zip_bytes({"zeros.bin": b"\0" * 100_000})
    assert len(bomb) < 1000
    with pytest.raises(TooLarge, match="unpacks to more than 1000 bytes"):
        services.project_import(project=project, archive=io.BytesIO(bomb), by=acting(user))
    settings.MEMSITE_ARCHIVE_MAX_BYTES = 10
    with pytest.raises(TooLarge, match="the limit is 10"):
        services.project_import(project=project, archive=io.BytesIO(tar_gz({"a": b"x"})), by=acting(user))
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_archives_import_only_into_projects(user):
    with pytest.raises(InvalidInput, match="not a project root"):
        services.project_import(project=NodeFactory(), archive=io.BytesIO(tar_gz({"a": b""})), by=acting(user))


def test_the_archive_root_entry_is_skipped(user):
    """`tar -C dir -czf project.tgz .` starts with a `./` member."""
    project = ProjectFactory()
    services.project_import(
        project=project, archive=io.BytesIO(tar_gz({"./a.py": b"a"}, dirs=["./", "./pkg/"])), by=acting(user)
    )
    assert tar_members(services.project_export(project=project)) == {"a.py": b"a"}
    assert selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/pkg").is_folder


def test_folders_count_against_the_entry_cap(user, settings):
    settings.MEMSITE_ARCHIVE_MAX_FILES = 3
    project = ProjectFactory()
    with pytest.raises(TooLarge, match="more than 3 files and folders"):
        services.project_import(
            project=project, archive=io.BytesIO(tar_gz({}, dirs=[f"d{i}/" for i in range(10)])), by=acting(user)
        )
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


def test_encrypted_and_corrupt_zips_are_refused(user):
    project = ProjectFactory()
    blob = bytearray(zip_bytes({"a.txt": b"hello " * 100}))
    encrypted = bytearray(blob)
    encrypted[6] |= 0x1  # the local header's "encrypted" flag
    central = encrypted.rindex(b"PK\x01\x02")
    encrypted[central + 8] |= 0x1  # and the central directory's
    with pytest.raises(InvalidInput, match="encrypted"):
        services.project_import(project=project, archive=io.BytesIO(bytes(encrypted)), by=acting(user))
    corrupt = bytearray(blob)
    corrupt[40:60] = b"\xff" * 20  # inside the deflated data
    with pytest.raises(InvalidInput, match="not a readable .zip"):
        services.project_import(project=project, archive=io.BytesIO(bytes(corrupt)), by=acting(user))
    assert selectors.node_subtree(node=project, include_self=False).count() == 0


@pytest.mark.parametrize("name", ["q/ sp.txt", "bidi/a\u202etxt.exe", "zero\u200bwidth.txt", "line\u2028sep"])
def test_member_names_must_be_clean(user, name):
    project = ProjectFactory()
    with pytest.raises(InvalidInput, match="is refused"):
        services.project_import(project=project, archive=io.BytesIO(tar_gz({name: b"x"})), by=acting(user))
