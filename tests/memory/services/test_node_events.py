"""Every node write leaves a NodeEvent: who made it, what it was, the version before and after.
A refused write, or one that changes nothing, leaves none; a deleted node's events stay."""

import io

import pytest

from memory import selectors, services
from memory.models import Node, NodeEvent
from memory.services import NodeSpec
from memsite.errors import Conflict, Forbidden
from tests.archives import tar_gz
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, acting, default_space, system

pytestmark = pytest.mark.django_db


def history(node_id: str) -> list[tuple]:
    """Oldest first: (action, username, version before, version after)."""
    events = NodeEvent.objects.filter(node_id=node_id).select_related("user").order_by("id")
    return [(e.action, e.user.username if e.user else None, e.version_before, e.version_after) for e in events]


def test_each_write_records_who_made_it_and_the_versions(internal, user):
    name = user.username
    document = DocumentFactory(by=acting(user))
    services.node_update(node=document, description="Changed", by=acting(user))
    services.node_content_set(node=document, data=b"# New\n", by=acting(user))
    services.node_move(node=document, parent=internal["user"], by=acting(user))
    assert history(document.pk) == [
        ("create", name, None, 1),
        ("update", name, 1, 2),
        ("content", name, 2, 3),
        ("move", name, 3, 4),
    ]
    assert Node.objects.get(pk=document.pk).version == 4


def test_the_system_s_own_writes_are_recorded_with_no_user(internal):
    folder = NodeFactory(by=system())
    assert history(folder.pk) == [("create", None, None, 1)]


def test_a_delete_records_every_node_of_the_branch_and_the_events_outlive_them(internal, user):
    folder = NodeFactory(by=acting(user))
    inner = DocumentFactory(parent=folder, by=acting(user))
    assert services.node_delete(node=folder, by=acting(user)) == 2
    assert not Node.objects.filter(pk__in=[folder.pk, inner.pk]).exists()
    name = user.username
    assert history(folder.pk) == [("create", name, None, 1), ("delete", name, 1, None)]
    assert history(inner.pk)[-1] == ("delete", user.username, 1, None)


def test_an_update_that_changes_nothing_records_nothing(internal, user):
    folder = NodeFactory(name="same", by=acting(user))
    services.node_update(node=folder, name="same", by=acting(user))
    assert [event[0] for event in history(folder.pk)] == ["create"]


def test_a_refused_write_records_nothing(internal, user):
    folder = NodeFactory(name="taken")
    other = NodeFactory(name="other")
    before = NodeEvent.objects.count()
    with pytest.raises(Conflict):
        services.node_update(node=other, name="taken", by=acting(user))
    with pytest.raises(Forbidden):
        services.node_delete(node=internal["user"], by=acting(user))
    with pytest.raises(Forbidden):
        services.node_update(node=internal["user"], description="Mine now", by=acting(user))
    assert NodeEvent.objects.count() == before
    assert [event[0] for event in history(folder.pk)] == ["create"]


def test_a_bulk_create_records_one_event_a_node(internal, user):
    inner = NodeSpec(name="b.md", type="document", content=b"b")
    specs = [NodeSpec(name="a", type="folder", children=[inner])]
    services.node_bulk_create(parent=internal["swarmstar"], specs=specs, by=acting(user))
    created = [specs[0].node_id, specs[0].children[0].node_id]
    for node_id in created:
        assert history(node_id) == [("create", user.username, None, 1)]


def test_an_archive_import_records_its_creates_content_writes_and_deletes(user):
    project = ProjectFactory()
    archive = io.BytesIO(tar_gz({"a.txt": b"a", "b.txt": b"b"}))
    services.project_import(project=project, archive=archive, by=acting(user))
    a_txt = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/a.txt")
    b_txt = selectors.node_resolve(space=default_space(), path=f"/projects/{project.name}/b.txt")
    assert history(a_txt.pk) == [("create", user.username, None, 1)]
    replacement = io.BytesIO(tar_gz({"a.txt": b"changed"}))
    services.project_import(project=project, archive=replacement, mode="replace", by=acting(user))
    assert history(a_txt.pk)[-1] == ("content", user.username, 1, 2)
    assert history(b_txt.pk)[-1] == ("delete", user.username, 1, None)
