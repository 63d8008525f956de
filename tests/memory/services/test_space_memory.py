"""Every space has a memory of its own: its own internal folders from the start, names that
other spaces may use too, and moves that never cross into another space."""

import pytest

from memory import selectors, services
from memory.internal_folders import INTERNAL_FOLDERS, USER_DOCUMENTS
from memory.models import Node
from memsite.errors import NotFound
from memsite.spaces.models import Space
from tests.factories import NodeFactory, default_space, system

pytestmark = pytest.mark.django_db


def test_a_new_space_has_its_own_internal_folders_and_user_documents():
    default_roots = set(selectors.node_roots(space=default_space()).values_list("pk", flat=True))
    other = Space.objects.create(slug="other", name="Other")
    roots = list(selectors.node_roots(space=other))
    assert [(root.name, root.description) for root in roots] == INTERNAL_FOLDERS
    assert {root.type for root in roots} == {"internal_folder"}
    assert default_roots.isdisjoint(root.pk for root in roots)
    user = selectors.node_internal_folder(space=other, name="user")
    documents = list(selectors.node_children(node=user))
    assert [document.name for document in documents] == [name for name, _, _ in USER_DOCUMENTS]
    assert {document.space_id for document in documents} == {other.pk}
    assert selectors.node_content(node=documents[0]) == USER_DOCUMENTS[0][2].encode()
    # the default space's are untouched
    assert set(selectors.node_roots(space=default_space()).values_list("pk", flat=True)) == default_roots


def test_the_same_names_live_in_two_spaces():
    other = Space.objects.create(slug="other", name="Other")
    here = NodeFactory(name="notes")
    there = NodeFactory(parent=selectors.node_internal_folder(space=other, name="swarmstar"), name="notes")
    assert selectors.node_resolve(space=default_space(), path="/swarmstar/notes") == here
    assert selectors.node_resolve(space=other, path="/swarmstar/notes") == there
    assert Node.objects.filter(parent__isnull=True, name="swarmstar").count() == 2


def test_a_node_is_never_moved_into_another_space():
    other = Space.objects.create(slug="other", name="Other")
    here = NodeFactory(name="notes")
    there = selectors.node_internal_folder(space=other, name="swarmstar")
    with pytest.raises(NotFound):
        services.node_move(node=here, parent=there, by=system())
    here.refresh_from_db()
    assert (
        here.space == default_space()
        and here.parent_id == selectors.node_internal_folder(space=default_space(), name="swarmstar").pk
    )


def test_a_node_of_another_space_is_not_found_by_id():
    other = Space.objects.create(slug="other", name="Other")
    there = selectors.node_internal_folder(space=other, name="swarmstar")
    with pytest.raises(NotFound):
        selectors.node_get(space=default_space(), node_id=there.pk)
    assert selectors.node_get(space=other, node_id=there.pk) == there
