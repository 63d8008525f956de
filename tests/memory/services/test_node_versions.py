"""A text document keeps what it was at each version (NodeVersion): its name, description and
text. `node_version` reads a version back; `node_restore` makes an old one the newest as a new
version, checked and recorded as an edit is, rewriting none."""

import pytest

from memory import selectors, services
from memory.models import Node, NodeContent, NodeEvent, NodeVersion, Passage
from memsite.errors import Conflict, Forbidden, NotFound
from memsite.spaces.logic import Role
from memsite.spaces.principals import Principal
from tests.factories import DocumentFactory, NodeFactory, UserFactory, acting, default_space, system

pytestmark = pytest.mark.django_db


def read(node: Node, version: int) -> tuple[str, str, str]:
    at = selectors.node_version(node=selectors.node_fresh(node=node), version=version)
    return at.name, at.description, at.text


def text_of(node: Node) -> str:
    return bytes(NodeContent.objects.get(node_id=node.pk).data).decode()


@pytest.fixture
def written(internal, user):
    """A document written four times: created, described, its text written, and moved."""
    document = DocumentFactory(name="plan.md", description="First.", content=b"one\ntwo\n", by=acting(user))
    services.node_update(node=document, description="Second.", by=acting(user))
    services.node_content_set(node=document, data=b"one\n2\nthree\n", by=acting(user))
    services.node_move(node=document, parent=internal["user"], by=acting(user))
    return selectors.node_fresh(node=document)


def test_every_version_reads_as_the_document_did_then(written):
    assert written.version == 4
    assert read(written, 1) == ("plan.md", "First.", "one\ntwo\n")
    assert read(written, 2) == ("plan.md", "Second.", "one\ntwo\n")
    assert read(written, 3) == ("plan.md", "Second.", "one\n2\nthree\n")
    assert read(written, 4) == read(written, 3)  # a move changes where it is, not what it reads


def test_the_newest_row_holds_no_copy_and_a_move_starts_none(written):
    rows = list(NodeVersion.objects.filter(node=written).order_by("version").values_list("version", "data"))
    assert [version for version, _ in rows] == [1, 2, 3]
    assert rows[-1][1] is None and all(data is not None for _, data in rows[:-1])


@pytest.mark.parametrize("version", [0, 5, 10**30])
def test_a_version_it_never_had_is_not_found(written, version):
    with pytest.raises(NotFound, match="has no version"):
        selectors.node_version(node=written, version=version)


def test_a_version_from_before_versions_were_kept_is_not_found(internal):
    document = DocumentFactory()
    services.node_update(node=document, description="Changed.", by=system())
    NodeVersion.objects.filter(node=document).delete()  # as a document written before the migration
    document = selectors.node_fresh(node=document)
    with pytest.raises(NotFound, match="not kept"):
        selectors.node_version(node=document, version=1)
    assert read(document, 2)[1] == "Changed."  # what it is now is known
    services.node_content_set(node=document, data=b"new", by=system())
    assert read(document, 2)[1:] == ("Changed.", f"# {document.name}\n\nSome notes.")


def test_a_node_that_is_no_text_document_keeps_no_versions(internal):
    folder = NodeFactory()
    services.node_update(node=folder, description="Changed.", by=system())
    assert not NodeVersion.objects.filter(node=folder).exists()
    with pytest.raises(NotFound, match="only text documents"):
        selectors.node_version(node=folder, version=1)


def test_a_document_keeps_its_last_versions_only(internal, monkeypatch):
    monkeypatch.setattr("memory.services.versions.VERSIONS_KEPT", 3)
    document = DocumentFactory()
    for number in range(5):
        services.node_content_set(node=document, data=f"text {number}".encode(), by=system())
    document = selectors.node_fresh(node=document)
    assert list(NodeVersion.objects.filter(node=document).order_by("version").values_list("version", flat=True)) == [
        4,
        5,
        6,
    ]
    assert read(document, 4)[2] == "text 2"
    with pytest.raises(NotFound, match="not kept"):
        selectors.node_version(node=document, version=3)
    assert selectors.node_versions_kept(node=document, versions=[2, 3, 4, 6, 7]) == {4, 6}


def test_a_deleted_document_takes_its_versions_with_it(written, user):
    services.node_delete(node=written, by=acting(user))
    assert not NodeVersion.objects.filter(node_id=written.pk).exists()


# -- restore ----------------------------------------------------------------------------------------


def test_a_restore_is_a_new_version_reading_as_the_old_one_did(written, user):
    restored = services.node_restore(node=written, version=1, expected_version=4, by=acting(user))
    assert restored.version == 5
    assert (restored.name, restored.description, text_of(restored)) == ("plan.md", "First.", "one\ntwo\n")
    # Nothing is rewritten: every earlier version reads as it did.
    assert read(restored, 3) == ("plan.md", "Second.", "one\n2\nthree\n")
    assert read(restored, 5) == read(restored, 1)


def test_a_restore_is_recorded_as_an_edit_is(written, user):
    services.node_restore(node=written, version=2, by=acting(user))
    event = NodeEvent.objects.filter(node_id=written.pk).latest("id")
    assert (event.action, event.user, event.version_before, event.version_after, event.restored_from) == (
        "restore",
        user,
        4,
        5,
        2,
    )
    # The content index follows the text, as it does a content write.
    indexed = " ".join(Passage.objects.filter(node_id=written.pk).values_list("text", flat=True))
    assert "two" in indexed and "three" not in indexed


def test_a_restore_brings_back_a_name_and_who_described(internal, user):
    document = DocumentFactory(name="old.md", by=acting(user))
    services.node_update(node=document, name="new.md", description="Mine.", by=acting(user))
    Node.objects.filter(pk=document.pk).update(description="Memsite's.", description_auto=True)  # as it describes
    services.node_content_set(node=document, data=b"later", by=acting(user))
    restored = services.node_restore(node=document, version=2, by=acting(user))
    assert (restored.name, restored.description, restored.description_auto) == ("new.md", "Memsite's.", True)
    restored = services.node_restore(node=document, version=1, by=acting(user))
    assert (restored.name, restored.description, restored.description_auto) == ("old.md", document.description, False)


def test_a_stale_version_is_a_conflict_and_writes_nothing(written, user):
    with pytest.raises(Conflict, match="it is at version 4, not 3"):
        services.node_restore(node=written, version=1, expected_version=3, by=acting(user))
    assert selectors.node_fresh(node=written).version == 4
    assert text_of(written) == "one\n2\nthree\n"


def test_a_reader_may_not_restore(written):
    reader = acting(UserFactory(role=Role.READER))
    with pytest.raises(Forbidden):
        services.node_restore(node=written, version=1, by=reader)
    assert selectors.node_fresh(node=written).version == 4


def test_a_token_limited_to_a_folder_restores_only_inside_it(internal, user):
    folder = NodeFactory(name="a", by=acting(user))
    inside = DocumentFactory(parent=folder, by=acting(user))
    outside = DocumentFactory(by=acting(user))
    for document in (inside, outside):
        services.node_content_set(node=document, data=b"changed", by=acting(user))
    limited = Principal(user, default_space(), Role.EDITOR, "/swarmstar/a/", None)
    with pytest.raises(Forbidden, match="writes only under /swarmstar/a/"):
        services.node_restore(node=outside, version=1, by=limited)
    assert selectors.node_fresh(node=outside).version == 2
    assert services.node_restore(node=inside, version=1, by=limited).version == 3


def test_restoring_what_it_reads_as_now_writes_nothing(written, user):
    """The version now, and any that reads as it does (the one before a move): left as it is,
    as an update that changes nothing is."""
    for version in (4, 3):
        assert services.node_restore(node=written, version=version, expected_version=4, by=acting(user)).version == 4
    assert NodeEvent.objects.filter(node_id=written.pk).count() == 4


def test_a_restore_to_a_name_a_sibling_took_is_a_conflict(internal, user):
    document = DocumentFactory(name="a.md", by=acting(user))
    services.node_update(node=document, name="b.md", by=acting(user))
    DocumentFactory(name="a.md", by=acting(user))
    with pytest.raises(Conflict, match="already used by a sibling"):
        services.node_restore(node=document, version=1, by=acting(user))
    assert selectors.node_fresh(node=document).name == "b.md"


def test_a_version_not_kept_cannot_be_restored(written, user):
    NodeVersion.objects.filter(node=written, version=1).delete()
    with pytest.raises(NotFound, match="not kept"):
        services.node_restore(node=written, version=1, by=acting(user))
