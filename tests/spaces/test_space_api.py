"""Making, reading, setting and deleting a space through the API: any logged-in user makes one
and owns it; owners set its caps and budgets (a member's at most the site's) and delete it, its
slug typed again (through a token, only with the manage scope); the default space stays. A
refusal changes nothing."""

import pytest
from django.test import override_settings

from memsite.spaces.logic import MANAGE_NEEDS, Role
from memsite.spaces.models import Membership, Space
from memsite.spaces.services import membership_set
from tests.factories import UserFactory, token_for
from tests.openapi import assert_documented
from tests.security.test_authorization import fingerprint
from tests.spaces.test_api import SPACES, key_client, manager_client, refused, session_client

pytestmark = pytest.mark.django_db


def outsider():
    """A user added to no space, as one made after the migrations is."""
    person = UserFactory()
    Membership.objects.filter(user=person).delete()
    return person


def test_a_user_in_no_space_lists_none_and_makes_one_they_own():
    person = outsider()
    client = session_client(person)
    assert client.get(SPACES).json() == []
    made = client.post(SPACES, {"slug": "swarm-a", "name": "Swarm A"}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["slug"] == "swarm-a" and made.json()["role"] == "owner"
    assert Membership.objects.get(user=person).role == Role.OWNER
    assert [space["slug"] for space in client.get(SPACES).json()] == ["swarm-a"]


def test_a_token_cannot_make_a_space(user):
    refusal = refused(key_client(token_for(user)), "post", SPACES, 403, {"slug": "x", "name": "X"})
    assert "own space only" in refusal["detail"]


def test_a_taken_or_bad_slug_and_unknown_fields_are_refused(user):
    client = session_client(user)
    assert "taken" in refused(client, "post", SPACES, 409, {"slug": "default", "name": "Again"})["detail"]
    assert "slug" in refused(client, "post", SPACES, 400, {"slug": "no spaces", "name": "X"})
    assert "slug" in refused(client, "post", SPACES, 400, {"name": "X"})
    assert "extra" in refused(client, "post", SPACES, 400, {"slug": "x", "name": "X", "extra": 1})


@override_settings(MEMSITE_SPACES_PER_USER=2)
def test_one_user_makes_at_most_the_sites_number_of_spaces(user):
    client = session_client(user)
    for slug in ("one", "two"):
        assert client.post(SPACES, {"slug": slug, "name": slug}, format="json").status_code == 201
    assert "MEMSITE_SPACES_PER_USER" in refused(client, "post", SPACES, 409, {"slug": "three", "name": "3"})["detail"]


def test_a_space_shows_its_settings_and_the_limits_that_apply(user, settings):
    shown = key_client(token_for(user)).get(f"{SPACES}default/").json()
    assert shown["role"] == "editor"
    assert shown["settings"]["quota_searches"] is None and shown["settings"]["llm_daily_calls"] is None
    assert shown["limits"]["quota_searches"] == settings.MEMSITE_QUOTA_SEARCHES
    assert shown["limits"]["member_llm_daily_tokens"] == settings.MEMSITE_LLM_DAILY_TOKENS
    assert shown["limits"]["llm_daily_calls"] is None


def test_an_owner_sets_caps_and_budgets_and_unsets_them(staff, settings):
    client = manager_client(staff)
    url = f"{SPACES}default/"
    changed = client.patch(url, {"name": "Main", "quota_searches": 2, "llm_daily_tokens": 5000}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["name"] == "Main" and changed.json()["limits"]["quota_searches"] == 2
    assert Space.objects.get(slug="default").llm_daily_tokens == 5000
    back = client.patch(url, {"quota_searches": None}, format="json").json()
    assert back["limits"]["quota_searches"] == settings.MEMSITE_QUOTA_SEARCHES


def test_a_members_cap_above_the_sites_or_below_zero_is_refused(staff, settings):
    client = manager_client(staff)
    url = f"{SPACES}default/"
    above = refused(client, "patch", url, 400, {"quota_ticks": settings.MEMSITE_QUOTA_TICKS + 1})
    assert "MEMSITE_QUOTA_TICKS" in above["detail"]
    assert "quota_ticks" in refused(client, "patch", url, 400, {"quota_ticks": -1})
    assert "quota_ticks" in refused(client, "patch", url, 400, {"quota_ticks": "3"})
    assert "slug" in refused(client, "patch", url, 400, {"slug": "renamed"})


@pytest.mark.parametrize("role", [Role.READER, Role.EDITOR])
def test_only_an_owner_changes_or_deletes_a_space(role):
    caller = UserFactory(role=role)
    url = f"{SPACES}default/"
    for client, ending in (
        (session_client(caller), "this needs an owner."),
        (key_client(token_for(caller)), f"{MANAGE_NEEDS}."),
    ):
        assert refused(client, "patch", url, 403, {"name": "Mine"})["detail"].endswith(ending)
        assert refused(client, "delete", url, 403, {"confirm": "default"})["detail"].endswith(ending)


def test_an_owner_deletes_their_space_and_its_members_and_tokens_go(user):
    client = session_client(user)
    client.post(SPACES, {"slug": "gone", "name": "Gone"}, format="json")
    space = Space.objects.get(slug="gone")
    membership_set(space=space, member=UserFactory(), role=Role.READER)
    assert client.delete(f"{SPACES}gone/", {"confirm": "gone"}, format="json").status_code == 204
    assert not Space.objects.filter(slug="gone").exists()
    assert not Membership.objects.filter(space_id=space.pk).exists()
    assert client.get(f"{SPACES}gone/").status_code == 404


@pytest.mark.parametrize("body", [None, {}, {"confirm": "gon"}, {"confirm": "GONE"}, {"confirm": ""}])
def test_deleting_a_space_without_its_slug_typed_again_is_a_400_that_deletes_nothing(user, body):
    client = session_client(user)
    client.post(SPACES, {"slug": "gone", "name": "Gone"}, format="json")
    before = fingerprint()
    response = (
        client.delete(f"{SPACES}gone/", body, format="json") if body is not None else client.delete(f"{SPACES}gone/")
    )
    assert response.status_code == 400, response.content
    assert response.json()["detail"] == "Type the space's slug, gone, to confirm deleting it."
    assert_documented(response, "/api/spaces/{slug}/", "delete")
    assert fingerprint() == before and Space.objects.filter(slug="gone").exists()


def test_a_bad_confirmation_is_a_400_too(user):
    client = session_client(user)
    client.post(SPACES, {"slug": "gone", "name": "Gone"}, format="json")
    assert "confirm" in refused(client, "delete", f"{SPACES}gone/", 400, {"confirm": 3})
    assert "extra" in refused(client, "delete", f"{SPACES}gone/", 400, {"confirm": "gone", "extra": 1})


def test_the_default_space_is_not_deleted(staff):
    refusal = refused(session_client(staff), "delete", f"{SPACES}default/", 409, {"confirm": "default"})
    assert "cannot be deleted" in refusal["detail"]


def test_a_session_acts_in_the_space_it_chose_last_while_it_is_a_member(user):
    client = session_client(user)
    client.post(SPACES, {"slug": "chosen", "name": "Chosen"}, format="json")
    session = client.session
    session["memsite_space"] = "chosen"
    session.save()
    assert client.get(f"{SPACES}chosen/members/").status_code == 200
    assert client.get("/api/usage/").status_code == 200
    Membership.objects.filter(user=user, space__slug="chosen").delete()
    assert client.get("/api/usage/").status_code == 200  # back in the default space, not refused
