"""The spaces API: the caller's spaces, members (owners manage them, through a token only with
the manage scope; the last owner stays one), tokens (a key shown once, only its digest kept; a
member's own, an owner's every one; through a token, made and revoked only with the manage
scope). A space the caller does not act in, or a member or token not theirs to see, is a 404; a
refusal changes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memsite.spaces.logic import MANAGE_NEEDS, Role, key_digest
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create
from tests.factories import UserFactory, default_space, token_for
from tests.security.test_authorization import fingerprint

pytestmark = pytest.mark.django_db
SPACES = "/api/spaces/"
MEMBERS = "/api/spaces/default/members/"
TOKENS = "/api/spaces/default/tokens/"
TOKEN_FIELDS = {
    "id", "prefix", "name", "user", "role", "manage", "write_under", "minted_by", "expires_at", "llm_daily_calls",
    "llm_daily_tokens", "revoked_at", "last_used_at", "created_at",
}  # fmt: skip


def key_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def token_client(user, role: str | None = None) -> APIClient:
    return key_client(token_for(user, role=role))


def manager_client(user, **options) -> APIClient:
    """A client with a token of `user`, an owner, made to manage the space."""
    return key_client(token_for(user, role=Role.OWNER, manage=True, **options))


def session_client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def role_of(user) -> str | None:
    return Membership.objects.filter(user=user).values_list("role", flat=True).first()


@pytest.fixture
def lab(db) -> Space:
    return Space.objects.create(slug="lab", name="Lab")


def refused(client, method: str, url: str, status: int, body: dict | None = None) -> dict:
    """The call's refusal, checked to have changed nothing."""
    before = fingerprint()
    response = getattr(client, method)(url, body, format="json") if body is not None else getattr(client, method)(url)
    assert response.status_code == status, response.content
    assert fingerprint() == before
    return response.json()


# -- spaces ---------------------------------------------------------------------------------------


def test_a_session_lists_every_space_of_its_user_with_its_role(user, lab):
    membership_set(space=lab, member=user, role=Role.OWNER)
    response = session_client(user).get(SPACES)
    assert response.status_code == 200
    assert response.json() == [
        {"slug": "default", "name": space_default().name, "role": "editor"},
        {"slug": "lab", "name": "Lab", "role": "owner"},
    ]


def test_a_token_lists_only_its_own_space_with_the_role_it_acts_with(staff, lab):
    membership_set(space=lab, member=staff, role=Role.OWNER)
    assert [(space["slug"], space["role"]) for space in token_client(staff, Role.READER).get(SPACES).json()] == [
        ("default", "reader")
    ]


# -- members --------------------------------------------------------------------------------------


def test_a_reader_lists_the_members_in_the_order_they_joined(user, staff):
    reader = UserFactory(role=Role.READER)
    response = token_client(reader).get(MEMBERS, {"page_size": 2})
    assert response.status_code == 200
    page = response.json()
    assert [entry["username"] for entry in page["results"]] == [user.username, staff.username]
    assert page["results"][0]["role"] == "editor" and page["next"]
    assert [entry["username"] for entry in token_client(reader).get(page["next"]).json()["results"]] == [
        reader.username
    ]


def test_an_owner_adds_a_user_and_changes_a_members_role(staff):
    newcomer = UserFactory()
    Membership.objects.filter(user=newcomer).delete()
    client = manager_client(staff)
    added = client.put(f"{MEMBERS}{newcomer.username}/", {"role": "reader"}, format="json")
    assert added.status_code == 200
    assert added.json()["username"] == newcomer.username and added.json()["role"] == "reader"
    assert client.put(f"{MEMBERS}{newcomer.username}/", {"role": "editor"}, format="json").json()["role"] == "editor"
    assert role_of(newcomer) == "editor"


@pytest.mark.parametrize("role", [Role.READER, Role.EDITOR])
def test_only_an_owner_manages_members(user, staff, role):
    caller = UserFactory(role=role)
    for client, ending in (
        (session_client(caller), "this needs an owner."),
        (token_client(caller), f"{MANAGE_NEEDS}."),
    ):
        assert refused(client, "put", f"{MEMBERS}{user.username}/", 403, {"role": "owner"})["detail"].endswith(ending)
        assert refused(client, "delete", f"{MEMBERS}{user.username}/", 403)["detail"].endswith(ending)


def test_bad_member_input_is_a_400_that_changes_nothing(staff, user):
    client = manager_client(staff)
    url = f"{MEMBERS}{user.username}/"
    assert "role" in refused(client, "put", url, 400, {"role": "admin"})
    assert "role" in refused(client, "put", url, 400, {})
    assert "extra" in refused(client, "put", url, 400, {"role": "reader", "extra": 1})


def test_an_unknown_user_or_member_is_a_404(staff, user):
    client = manager_client(staff)
    assert refused(client, "put", f"{MEMBERS}nobody/", 404, {"role": "reader"})["detail"] == "No user 'nobody'."
    Membership.objects.filter(user=user).delete()
    assert refused(client, "delete", f"{MEMBERS}{user.username}/", 404)["detail"] == (
        f"No member '{user.username}' in 'default'."
    )


def test_the_last_owner_is_neither_lowered_nor_removed(staff):
    client = session_client(staff)
    url = f"{MEMBERS}{staff.username}/"
    lowered = refused(client, "put", url, 409, {"role": "editor"})
    assert lowered["detail"].startswith(f"{staff.username} is the last owner of 'default'")
    assert "cannot be removed" in refused(client, "delete", url, 409)["detail"]
    other = UserFactory(role=Role.OWNER)
    assert client.put(url, {"role": "editor"}, format="json").status_code == 200
    assert refused(manager_client(other), "delete", f"{MEMBERS}{other.username}/", 409)["detail"]


def test_a_removed_members_tokens_are_refused(staff, user):
    key = token_for(user)
    assert manager_client(staff).delete(f"{MEMBERS}{user.username}/").status_code == 204
    assert role_of(user) is None
    assert key_client(key).get(SPACES).status_code == 401
    assert ApiToken.objects.filter(digest=key_digest(key)).exists()  # kept, and refused


# -- another space ----------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", ["lab", "nowhere"])
def test_a_space_the_caller_is_not_in_is_a_404_whether_it_exists_or_not(staff, lab, slug):
    client = session_client(staff)
    for method, path, body in (
        ("get", "members/", None),
        ("put", f"members/{staff.username}/", {"role": "owner"}),
        ("get", "tokens/", None),
        ("post", "tokens/", {"name": "x"}),
    ):
        assert refused(client, method, f"/api/spaces/{slug}/{path}", 404, body)["detail"] == f"No space '{slug}'."


def test_a_token_acts_only_in_its_own_space(staff, lab):
    membership_set(space=lab, member=staff, role=Role.OWNER)
    client = token_client(staff)
    assert refused(client, "get", "/api/spaces/lab/members/", 404)["detail"] == "No space 'lab'."
    assert session_client(staff).get("/api/spaces/lab/members/").status_code == 200


# -- tokens -----------------------------------------------------------------------------------------


def test_a_new_tokens_key_is_shown_once_and_only_its_digest_kept(user):
    client = session_client(user)
    response = client.post(TOKENS, {"name": "swarm node a", "write_under": "/swarmstar/"}, format="json")
    assert response.status_code == 201
    made = response.json()
    assert set(made) == TOKEN_FIELDS | {"key"}
    assert (made["user"], made["role"], made["write_under"], made["expires_at"]) == (
        user.username,
        "editor",
        "/swarmstar/",
        None,
    )
    token = ApiToken.objects.get(pk=made["id"])
    assert token.digest == key_digest(made["key"]) and made["key"].startswith(token.prefix)
    listed = client.get(TOKENS).json()["results"]
    assert [entry["id"] for entry in listed] == [token.pk] and set(listed[0]) == TOKEN_FIELDS
    assert made["key"] not in client.get(TOKENS).content.decode()
    assert made["key"] not in str(fingerprint())  # in no row of any table
    assert key_client(made["key"]).get(SPACES).status_code == 200


def test_an_expiry_in_days_or_at_a_moment(user):
    client = session_client(user)
    in_days = client.post(TOKENS, {"name": "a", "expires_in_days": 30}, format="json").json()
    expires = ApiToken.objects.get(pk=in_days["id"]).expires_at
    assert 29.9 < (expires - timezone.now()).total_seconds() / 86_400 <= 30
    moment = (timezone.now() + timedelta(hours=1)).replace(microsecond=0)
    at = client.post(TOKENS, {"name": "b", "expires_at": moment.isoformat()}, format="json").json()
    assert ApiToken.objects.get(pk=at["id"]).expires_at == moment


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "name"),
        ({"name": 3}, "name"),
        ({"name": "a", "role": "admin"}, "role"),
        ({"name": "a", "expires_in_days": 0}, "expires_in_days"),
        ({"name": "a", "expires_in_days": "3"}, "expires_in_days"),
        ({"name": "a", "expires_at": "2000-01-01T00:00:00Z"}, "non_field_errors"),
        ({"name": "a", "expires_at": "2999-01-01T00:00:00Z", "expires_in_days": 3}, "non_field_errors"),
        ({"name": "a", "key": "ms_mine"}, "key"),
        ({"name": "a", "write_under": "swarmstar"}, "detail"),
    ],
)
def test_bad_token_input_is_a_400_that_writes_nothing(user, body, field):
    assert field in refused(session_client(user), "post", TOKENS, 400, body)


def test_a_token_is_an_editor_unless_an_owner_is_asked_for(staff, user):
    """A swarm node's key, made without a role, runs nothing of the space's."""
    for client in (session_client(staff), manager_client(staff)):
        made = client.post(TOKENS, {"name": "swarm node a"}, format="json").json()
        assert (made["role"], made["manage"]) == ("editor", False)
        owner = client.post(TOKENS, {"name": "admin", "role": "owner", "manage": True}, format="json").json()
        assert (owner["role"], owner["manage"]) == ("owner", True)
    reader = UserFactory(role=Role.READER)
    assert session_client(reader).post(TOKENS, {"name": "r"}, format="json").json()["role"] == "reader"


def test_a_token_made_by_a_token_records_its_maker(staff):
    maker = ApiToken.objects.get(digest=key_digest(key := token_for(staff, role=Role.OWNER, manage=True)))
    made = key_client(key).post(TOKENS, {"name": "minted"}, format="json").json()
    assert made["minted_by"] == maker.pk and ApiToken.objects.get(pk=made["id"]).minted_by == maker
    assert session_client(staff).post(TOKENS, {"name": "mine"}, format="json").json()["minted_by"] is None


@pytest.mark.parametrize(
    "body, message",
    [
        ({"role": "editor", "manage": True}, "ask for the role owner, not editor"),
        ({"manage": True}, "ask for the role owner, not editor"),
        ({"role": "owner", "manage": True, "write_under": "/swarmstar/nodes/a/"}, "cannot have the manage scope"),
    ],
)
def test_the_manage_scope_only_with_the_owner_role_and_no_folder_else_a_422(staff, body, message):
    for client in (session_client(staff), manager_client(staff)):
        assert message in refused(client, "post", TOKENS, 422, {"name": "x", **body})["detail"]


def test_a_reader_cannot_ask_for_the_manage_scope(user):
    reader = UserFactory(role=Role.READER)
    conflict = refused(session_client(reader), "post", TOKENS, 409, {"name": "x", "role": "owner", "manage": True})
    assert "cannot be owner" in conflict["detail"]


def test_an_expiring_token_makes_tokens_that_expire_no_later(staff):
    expires_at = timezone.now() + timedelta(days=1)
    client = manager_client(staff, expires_at=expires_at)
    later = refused(client, "post", TOKENS, 403, {"name": "x", "expires_in_days": 2})
    assert "makes tokens that expire no later" in later["detail"]
    same = client.post(TOKENS, {"name": "same"}, format="json")
    assert same.status_code == 201
    assert ApiToken.objects.get(pk=same.json()["id"]).expires_at == expires_at


def test_no_token_above_its_members_role(staff, user):
    body = {"name": "x", "role": "owner", "user": user.username}
    conflict = refused(manager_client(staff), "post", TOKENS, 409, body)
    assert "cannot be owner" in conflict["detail"]


def test_an_owner_makes_a_token_for_another_member_and_no_one_else_does(staff, user):
    made = manager_client(staff).post(TOKENS, {"name": "theirs", "user": user.username}, format="json")
    assert made.status_code == 201 and (made.json()["user"], made.json()["role"]) == (user.username, "editor")
    other = UserFactory(role=Role.EDITOR)
    refusal = refused(session_client(user), "post", TOKENS, 403, {"name": "x", "user": other.username})
    assert refusal["detail"].endswith("this needs an owner.")
    mine = session_client(user).post(TOKENS, {"name": "mine", "user": user.username}, format="json")
    assert mine.status_code == 201


def test_a_token_for_someone_outside_the_space_is_a_404(staff, lab):
    outsider = UserFactory()
    Membership.objects.filter(user=outsider).delete()
    refusal = refused(manager_client(staff), "post", TOKENS, 404, {"name": "x", "user": outsider.username})
    assert refusal["detail"] == f"No member '{outsider.username}' in 'default'."


def test_an_owner_sees_every_token_and_anyone_else_their_own(staff, user):
    token_for(staff)
    token_for(user)
    owner_sees = {entry["user"] for entry in token_client(staff).get(TOKENS).json()["results"]}
    member_sees = {entry["user"] for entry in session_client(user).get(TOKENS).json()["results"]}
    assert owner_sees == {staff.username, user.username}
    assert member_sees == {user.username}


def test_a_member_revokes_their_own_token_once_and_for_all(user):
    mine = token_create(member=user, space=default_space(), name="mine").token
    client = session_client(user)
    first = client.delete(f"{TOKENS}{mine.pk}/")
    assert first.status_code == 200 and first.json()["revoked_at"] is not None
    again = client.delete(f"{TOKENS}{mine.pk}/")
    assert again.status_code == 200 and again.json()["revoked_at"] == first.json()["revoked_at"]


def test_another_members_token_is_a_404_but_to_an_owner(staff, user):
    theirs = token_create(member=staff, space=default_space(), name="theirs").token
    url = f"{TOKENS}{theirs.pk}/"
    assert refused(session_client(user), "delete", url, 404)["detail"] == f"No token {theirs.pk} in 'default'."
    assert refused(session_client(user), "delete", f"{TOKENS}999999/", 404)["detail"] == "No token 999999 in 'default'."
    mine = token_create(member=user, space=default_space(), name="mine").token
    assert manager_client(staff).delete(f"{TOKENS}{mine.pk}/").json()["revoked_at"] is not None


def test_a_token_of_another_space_is_a_404(staff, lab):
    membership_set(space=lab, member=staff, role=Role.OWNER)
    elsewhere = token_create(member=staff, space=lab, name="lab's").token
    assert refused(session_client(staff), "delete", f"{TOKENS}{elsewhere.pk}/", 404)
