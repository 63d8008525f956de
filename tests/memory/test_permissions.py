"""node_permissions is the one answer to what a user may do to a node: the services refuse what
it refuses, and the dashboard offers what it allows."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from memory import services
from memory.permissions import REFUSALS, node_permissions
from memsite.errors import Forbidden
from tests.factories import DocumentFactory

pytestmark = pytest.mark.django_db
ACTIONS = tuple(REFUSALS)  # every action a permission answers has a refusal to give


def allowed(node, user) -> dict[str, bool]:
    permissions = node_permissions(node, user)
    return {action: getattr(permissions, action) for action in ACTIONS}


def test_anyone_may_do_anything_to_a_node_of_their_own_tree(internal, user, staff):
    document = DocumentFactory()
    for who in (user, staff, None, AnonymousUser()):
        assert set(allowed(document, who).values()) == {True}


def test_an_internal_folder_may_only_be_described_and_only_by_staff(internal, user, staff):
    folder = internal["user"]
    assert allowed(folder, staff) == {action: action == "edit" for action in ACTIONS}
    for who in (user, None, AnonymousUser()):
        assert set(allowed(folder, who).values()) == {False}


def test_a_refusal_says_why(internal, user):
    with pytest.raises(Forbidden, match="cannot be moved"):
        node_permissions(internal["user"], user).require("move")


@pytest.mark.parametrize("who", ["user", "staff"])
def test_the_dashboard_offers_what_the_services_accept(internal, client, request, who):
    person = request.getfixturevalue(who)
    client.force_login(person)
    page = client.get(reverse("memory:node_detail", args=[internal["user"].pk])).content.decode()
    offers_description = "Edit description" in page
    try:
        services.node_update(node=internal["user"], user=person, description="Tabs of preferences")
        accepted = True
    except Forbidden:
        accepted = False
    assert offers_description == accepted == (who == "staff")
