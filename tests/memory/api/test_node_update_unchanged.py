"""A PATCH that changes nothing: refused on an internal folder for anyone but staff, and never a
new version. A non-staff no-op on an internal folder used to answer 200 and bump its version."""

import pytest

from memory.models import Node
from tests.factories import NodeFactory
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db


UNCHANGED = {
    "same-name": lambda folder: {"name": folder.name},
    "same-type": lambda folder: {"type": "internal_folder"},
    "same-description": lambda folder: {"description": folder.description},
    "empty-context": lambda folder: {"context": {}},
}


@pytest.mark.parametrize("name", ["swarmstar", "user", "projects", "references"])
@pytest.mark.parametrize("unchanged", UNCHANGED.values(), ids=UNCHANGED.keys())
def test_a_non_staff_patch_of_an_internal_folder_is_refused_even_if_it_changes_nothing(api, internal, name, unchanged):
    folder = internal[name]
    before = tree_state()

    response = api.patch(url("node-detail", folder), unchanged(folder), format="json")

    assert response.status_code == 403, response.content
    assert "Only owners may edit the internal folder" in response.json()["detail"]
    assert tree_state() == before


def test_a_staff_patch_of_an_internal_folder_that_changes_nothing_keeps_its_version(staff_api, internal):
    folder = internal["user"]
    before = tree_state()

    response = staff_api.patch(
        url("node-detail", folder), {"name": folder.name, "description": folder.description}, format="json"
    )

    assert response.status_code == 200, response.content
    assert response.json()["version"] == folder.version and response["ETag"] == f'"{folder.version}"'
    assert tree_state() == before


@pytest.mark.parametrize(
    "body",
    [{"name": "logs"}, {"name": " logs "}, {"description": "All runs"}, {"type": "folder", "context": {}}],
    ids=["same-name", "padded-name", "same-description", "same-type-and-context"],
)
def test_a_patch_that_changes_nothing_keeps_the_version(api, internal, body):
    folder = NodeFactory(name="logs", description="All runs")
    before = tree_state()

    response = api.patch(url("node-detail", folder), {**body, "version": folder.version}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["version"] == 1 and response["ETag"] == '"1"'
    assert tree_state() == before


def test_a_patch_that_changes_something_still_bumps_the_version(api, internal):
    folder = NodeFactory(name="logs", description="All runs")

    response = api.patch(url("node-detail", folder), {"name": "logs", "description": "Every run"}, format="json")

    assert response.status_code == 200 and response.json()["version"] == 2
    assert Node.objects.get(pk=folder.pk).description == "Every run"
