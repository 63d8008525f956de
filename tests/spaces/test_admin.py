"""The admin's memberships: roles changed, members added and deleted, one or many at once, but
never a space left without an owner; a refusal says why and changes nothing."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from memsite.spaces.logic import Role
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.services import membership_set, token_create
from tests.factories import StaffFactory, UserFactory, default_space, staff_with

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:spaces_membership_changelist")
LAST_OWNER = "is the last owner of 'lab' and cannot be"


@pytest.fixture
def admin_client(client: Client) -> Client:
    staff = StaffFactory()
    staff.save()  # the factory sets the password after creating the row
    client.force_login(staff)
    return client


@pytest.fixture
def lab() -> Space:
    return Space.objects.create(slug="lab", name="Lab")


@pytest.fixture
def ana(lab) -> Membership:
    """Lab's one owner."""
    return membership_set(space=lab, member=UserFactory(username="ana"), role=Role.OWNER)


@pytest.fixture
def bo(lab) -> Membership:
    return membership_set(space=lab, member=UserFactory(username="bo"), role=Role.EDITOR)


def change_url(membership: Membership) -> str:
    return reverse("admin:spaces_membership_change", args=[membership.pk])


def delete_url(membership: Membership) -> str:
    return reverse("admin:spaces_membership_delete", args=[membership.pk])


def roles(space: Space) -> dict[str, str]:
    return dict(Membership.objects.filter(space=space).values_list("user__username", "role"))


def shown(response) -> str:
    return " ".join(str(message) for message in get_messages(response.wsgi_request))


def change(client: Client, membership: Membership, role: str):
    return client.post(change_url(membership), {"role": role})


def test_the_last_owner_s_role_stays_and_the_form_says_why(admin_client, lab, ana, bo):
    response = change(admin_client, ana, Role.EDITOR)

    assert response.status_code == 200
    assert escape(f"ana {LAST_OWNER} made editor; make another member an owner first.") in response.content.decode()
    assert roles(lab) == {"ana": "owner", "bo": "editor"}


def test_an_owner_is_lowered_once_another_member_is_an_owner(admin_client, lab, ana, bo):
    assert change(admin_client, bo, Role.OWNER).status_code == 302
    assert change(admin_client, ana, Role.READER).status_code == 302
    assert roles(lab) == {"ana": "reader", "bo": "owner"}


def test_a_membership_keeps_its_user_and_space(admin_client, lab, ana):
    other = Space.objects.create(slug="other", name="Other")
    response = admin_client.post(change_url(ana), {"role": Role.OWNER, "space": other.pk, "user": UserFactory().pk})
    assert response.status_code == 302
    assert roles(lab) == {"ana": "owner"} and not Membership.objects.filter(space=other).exists()


def test_a_member_is_added(admin_client, lab, ana):
    user = UserFactory(username="cy")
    response = admin_client.post(
        reverse("admin:spaces_membership_add"), {"user": user.pk, "space": lab.pk, "role": Role.READER}
    )
    assert response.status_code == 302
    assert roles(lab) == {"ana": "owner", "cy": "reader"}


@pytest.mark.parametrize("method", ["get", "post"])
def test_deleting_the_last_owner_is_refused_before_the_confirmation(admin_client, lab, ana, method):
    response = getattr(admin_client, method)(delete_url(ana), {"post": "yes"} if method == "post" else None)

    assert response.status_code == 302 and response["Location"] == change_url(ana)
    assert f"ana {LAST_OWNER} removed" in shown(response)
    assert roles(lab) == {"ana": "owner"}


def test_an_owner_is_deleted_once_another_member_is_an_owner(admin_client, lab, ana, bo):
    membership_set(space=lab, member=bo.user, role=Role.OWNER)
    assert admin_client.get(delete_url(ana)).status_code == 200  # the confirmation page
    assert admin_client.post(delete_url(ana), {"post": "yes"}).status_code == 302
    assert roles(lab) == {"bo": "owner"}


def delete_selected(client: Client, *memberships: Membership, confirmed: bool = True):
    body = {"action": "delete_selected", ACTION_CHECKBOX_NAME: [membership.pk for membership in memberships]}
    return client.post(CHANGELIST, {**body, "post": "yes"} if confirmed else body)


@pytest.mark.parametrize("confirmed", [False, True], ids=["asked", "confirmed"])
def test_deleting_every_owner_at_once_deletes_nothing(admin_client, lab, ana, bo, confirmed):
    membership_set(space=lab, member=bo.user, role=Role.OWNER)
    cy = membership_set(space=lab, member=UserFactory(username="cy"), role=Role.READER)

    response = delete_selected(admin_client, cy, ana, bo, confirmed=confirmed)

    assert response.status_code == 302  # back to the list, with no confirmation page
    assert LAST_OWNER in shown(response) and "Successfully deleted" not in shown(response)
    assert roles(lab) == {"ana": "owner", "bo": "owner", "cy": "reader"}


def test_deleting_members_and_all_but_one_owner_at_once(admin_client, lab, ana, bo):
    membership_set(space=lab, member=bo.user, role=Role.OWNER)
    cy = membership_set(space=lab, member=UserFactory(username="cy"), role=Role.READER)

    assert delete_selected(admin_client, cy, ana, confirmed=False).status_code == 200  # the confirmation page
    response = delete_selected(admin_client, cy, ana)

    assert response.status_code == 302 and "Successfully deleted 2 memberships." in shown(response)
    assert roles(lab) == {"bo": "owner"}


# -- the space's owners, and nobody else -------------------------------------------------------------

MODELS = ("space", "membership", "apitoken")


@pytest.fixture
def reader_of_lab(client: Client, lab) -> Client:
    """A staff user, not a superuser, who owns `default` but only reads `lab`, with every right
    Django's own permissions give on spaces, memberships and tokens."""
    rights = [f"spaces.{verb}_{model}" for verb in ("view", "add", "change", "delete") for model in MODELS]
    person = staff_with(*rights, username="dee")
    membership_set(space=lab, member=person, role=Role.READER)
    client.force_login(person)
    return client


def test_a_reader_of_the_space_changes_none_of_its_members(reader_of_lab, lab, ana, bo):
    assert change(reader_of_lab, bo, Role.OWNER).status_code == 403
    assert reader_of_lab.post(delete_url(bo), {"post": "yes"}).status_code == 403
    assert delete_selected(reader_of_lab, bo).status_code == 403
    add = {"user": UserFactory(username="cy").pk, "space": lab.pk, "role": Role.OWNER}
    assert reader_of_lab.post(reverse("admin:spaces_membership_add"), add).status_code == 403
    assert roles(lab) == {"ana": "owner", "bo": "editor", "dee": "reader"}


def test_an_owner_of_default_adds_members_there_only(reader_of_lab, lab, ana):
    cy = get_user_model().objects.create_user(username="cy")
    add = {"user": cy.pk, "space": default_space().pk, "role": Role.EDITOR}
    assert reader_of_lab.post(reverse("admin:spaces_membership_add"), add).status_code == 302
    assert Membership.objects.get(user=cy).space == default_space()


def test_a_reader_of_the_space_renames_it_not(reader_of_lab, lab):
    response = reader_of_lab.post(reverse("admin:spaces_space_change", args=[lab.pk]), {"name": "Mine"})
    assert response.status_code == 403
    assert Space.objects.get(pk=lab.pk).name == "Lab"
    own = default_space()
    response = reader_of_lab.post(reverse("admin:spaces_space_change", args=[own.pk]), {"name": "Ours"})
    assert response.status_code == 302 and Space.objects.get(pk=own.pk).name == "Ours"


def revoke(client: Client, *tokens: ApiToken):
    body = {"action": "revoke", ACTION_CHECKBOX_NAME: [token.pk for token in tokens]}
    return client.post(reverse("admin:spaces_apitoken_changelist"), body)


def test_a_reader_of_the_space_revokes_their_own_tokens_only(reader_of_lab, lab, ana):
    theirs = token_create(member=ana.user, space=lab, name="ana's").token
    own = token_create(member=get_user_model().objects.get(username="dee"), space=lab, name="mine").token

    assert revoke(reader_of_lab, own, theirs).status_code == 403  # all or none
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()
    assert revoke(reader_of_lab, own).status_code == 302
    assert list(ApiToken.objects.filter(revoked_at__isnull=False)) == [own]
