"""node_permissions is the one answer to what a principal may do to a node: the services refuse
what it refuses, and the dashboard offers what it allows. It is judged by the principal's role in
its own space, with nothing taken from `default`; and a node of another space is not there."""

import pytest
from django.urls import reverse

from memory import selectors, services
from memory.permissions import REFUSALS, node_permissions, write_under_require
from memsite.errors import Forbidden, NotFound
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal
from memsite.spaces.services import membership_set
from tests.factories import DocumentFactory, acting, default_space, system

pytestmark = pytest.mark.django_db
ACTIONS = tuple(REFUSALS)  # every action a permission answers has a refusal to give


def allowed(node, by: Principal) -> dict[str, bool]:
    permissions = node_permissions(node, by=by)
    return {action: getattr(permissions, action) for action in ACTIONS}


@pytest.fixture
def lab() -> Space:
    return Space.objects.create(slug="lab", name="Lab")


def test_anyone_may_do_anything_to_a_node_of_their_own_tree(internal, user, staff):
    document = DocumentFactory()
    for by in (acting(user), acting(staff), system()):
        assert set(allowed(document, by).values()) == {True}


def test_an_internal_folder_may_only_be_described_and_only_by_owners(internal, user, staff):
    folder = internal["user"]
    for by in (acting(staff), system()):
        assert allowed(folder, by) == {action: action == "edit" for action in ACTIONS}
    assert set(allowed(folder, acting(user)).values()) == {False}


def test_a_role_counts_in_its_own_space_only(staff, lab):
    """An owner of `default` who reads `lab` is a reader there, not an owner."""
    membership_set(space=lab, member=staff, role=Role.READER)
    folder = selectors.node_internal_folder(space=lab, name="user")
    assert not node_permissions(folder, by=acting(staff, lab)).edit
    assert node_permissions(selectors.node_internal_folder(space=default_space(), name="user"), by=acting(staff)).edit


def test_a_node_of_another_space_is_not_there_to_write(internal, lab):
    with pytest.raises(NotFound):
        write_under_require(internal["user"], by=system(lab))
    with pytest.raises(NotFound):
        services.node_update(node=DocumentFactory(), description="Moved in", by=system(lab))


def test_a_refusal_says_why(internal, user):
    with pytest.raises(Forbidden, match="cannot be moved"):
        node_permissions(internal["user"], by=acting(user)).require("move")


@pytest.mark.parametrize("who", ["user", "staff"])
def test_the_dashboard_offers_what_the_services_accept(internal, client, request, who):
    person = request.getfixturevalue(who)
    client.force_login(person)
    page = client.get(reverse("memory:node_detail", args=[internal["user"].pk])).content.decode()
    offers_description = "Edit description" in page
    try:
        services.node_update(node=internal["user"], description="Tabs of preferences", by=acting(person))
        accepted = True
    except Forbidden:
        accepted = False
    assert offers_description == accepted == (who == "staff")
