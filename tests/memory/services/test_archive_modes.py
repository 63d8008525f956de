"""A project file keeps its mode from the archive it came in to the archive it goes out in."""

import importlib
import io

import pytest
from django.apps import apps

from memory import selectors, services
from memory.models import Node
from tests.archives import tar_gz, tar_members, tar_modes, zip_bytes, zip_with_modes
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, acting, default_space, system

pytestmark = pytest.mark.django_db

FILES = {"bin/run.sh": b"#!/bin/sh\necho hi\n", "README.md": b"# demo\n", "secrets.env": b"KEY=1\n"}
MODES = {"bin/run.sh": 0o755, "README.md": 0o644, "secrets.env": 0o600}


def imported(project, blob, user, **kwargs):
    return services.project_import(project=project, archive=io.BytesIO(blob), **kwargs, by=acting(user))


def node_at(project, path):
    return selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/{path}")


@pytest.mark.parametrize(
    "pack",
    [lambda: tar_gz(FILES, modes=MODES), lambda: zip_with_modes(FILES, MODES)],
    ids=["tar.gz", "zip-made-on-unix"],
)
def test_modes_go_from_the_archive_to_the_nodes_and_back(user, pack):
    project = ProjectFactory()
    imported(project, pack(), user)
    assert node_at(project, "bin/run.sh").mode == 0o755
    assert node_at(project, "secrets.env").mode == 0o600
    exported = b"".join(services.project_export(project=project))
    assert tar_modes(exported) == MODES
    assert tar_members(exported) == FILES


def test_a_zip_made_elsewhere_than_on_unix_gives_the_default_mode(user):
    """MS-DOS attributes, not a mode, are in a zip made on Windows: its high bits mean nothing."""
    project = ProjectFactory()
    imported(project, zip_with_modes(FILES, MODES, made_on=0), user)
    assert tar_modes(services.project_export(project=project)) == dict.fromkeys(FILES, 0o644)


@pytest.mark.parametrize(
    "given, kept",
    [
        (0o4755, 0o755),  # setuid dropped
        (0o2750, 0o750),  # setgid dropped
        (0o1777, 0o755),  # sticky, group and world write dropped
        (0o666, 0o644),  # world-writable
        (0o700, 0o700),
        (0o444, 0o444),
        (0, 0o644),  # no permission bits at all: the default
    ],
)
def test_only_safe_permission_bits_are_kept(user, given, kept):
    project = ProjectFactory()
    imported(project, tar_gz({"tool": b"x"}, modes={"tool": given}), user)
    assert node_at(project, "tool").mode == kept
    assert tar_modes(services.project_export(project=project)) == {"tool": kept}


def test_files_made_otherwise_have_the_default_mode_and_other_nodes_none(user):
    project = ProjectFactory()
    imported(project, zip_bytes({"src/a.py": b"a"}), user)  # zipfile.writestr's 0600
    file = services.node_create(
        parent=project,
        type="project_file_bytes",
        name="b.py",
        context={"file_path": "b.py"},
        content=b"b",
        by=system(),
    )
    assert (file.mode, node_at(project, "src/a.py").mode) == (0o644, 0o600)
    assert node_at(project, "src").mode is None
    assert project.mode is None and DocumentFactory().mode is None and NodeFactory().mode is None


def test_the_migration_gives_project_files_stored_before_it_the_default_mode(user):
    project = ProjectFactory()
    imported(project, tar_gz(FILES, modes=MODES), user)
    Node.objects.update(mode=None)  # as every row was before the column
    migration = importlib.import_module("memory.migrations.0011_node_mode")
    migration.project_files_get_the_default_mode(apps, None)
    modes = dict(Node.objects.filter(type="project_file_bytes").values_list("name", "mode"))
    assert modes == {"run.sh": 0o644, "README.md": 0o644, "secrets.env": 0o644}
    assert not Node.objects.exclude(type="project_file_bytes").filter(mode__isnull=False).exists()
