"""The spaces API: the caller's spaces, members (owners manage them; the last owner stays one),
tokens (a key shown once, only its digest kept; a member's own, an owner's every one). A space
the caller does not act in, or a member or token not theirs to see, is a 404; a refusal
changes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memsite.spaces.logic import Role, key_digest
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create
from tests.factories import UserFactory, token_for
from tests.security.test_authorization import fingerprint

pytestmark = pytest.mark.django_db
SPACES = "/api/spaces/"
MEMBERS = "/api/spaces/default/members/"
TOKENS = "/api/spaces/default/tokens/"
TOKEN_FIELDS = {
    "id", "prefix", "name", "user", "role", "write_under", "expires_at", "llm_daily_calls", "llm_daily_tokens",
    "revoked_at", "last_used_at", "created_at",
}  # fmt: skip


def key_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def token_client(user, role: str | None = None) -> APIClient:
    return key_client(token_for(user, role=role))


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
    membership_set(space=lab, user=user, role=Role.OWNER)
    response = session_client(user).get(SPACES)
    assert response.status_code == 200
    assert response.json() == [
        {"slug": "default", "name": space_default().name, "role": "editor"},
        {"slug": "lab", "name": "Lab", "role": "owner"},
    ]


def test_a_token_lists_only_its_own_space_with_the_role_it_acts_with(staff, lab):
    membership_set(space=lab, user=staff, role=Role.OWNER)
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
    client = token_client(staff)
    added = client.put(f"{MEMBERS}{newcomer.username}/", {"role": "reader"}, format="json")
    assert added.status_code == 200
    assert added.json()["username"] == newcomer.username and added.json()["role"] == "reader"
    assert client.put(f"{MEMBERS}{newcomer.username}/", {"role": "editor"}, format="json").json()["role"] == "editor"
    assert role_of(newcomer) == "editor"


@pytest.mark.parametrize("role", [Role.READER, Role.EDITOR])
def test_only_an_owner_manages_members(user, staff, role):
    caller = UserFactory(role=role)
    client = token_client(caller)
    refusal = "this needs an owner."
    assert refused(client, "put", f"{MEMBERS}{user.username}/", 403, {"role": "owner"})["detail"].endswith(refusal)
    assert refused(client, "delete", f"{MEMBERS}{user.username}/", 403)["detail"].endswith(refusal)


def test_bad_member_input_is_a_400_that_changes_nothing(staff, user):
    client = token_client(staff)
    url = f"{MEMBERS}{user.username}/"
    assert "role" in refused(client, "put", url, 400, {"role": "admin"})
    assert "role" in refused(client, "put", url, 400, {})
    assert "extra" in refused(client, "put", url, 400, {"role": "reader", "extra": 1})


def test_an_unknown_user_or_member_is_a_404(staff, user):
    client = token_client(staff)
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
    assert refused(token_client(other), "delete", f"{MEMBERS}{other.username}/", 409)["detail"]


def test_a_removed_members_tokens_are_refused(staff, user):
    key = token_for(user)
    assert token_client(staff).delete(f"{MEMBERS}{user.username}/").status_code == 204
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
    membership_set(space=lab, user=staff, role=Role.OWNER)
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


def test_a_token_makes_no_token_above_its_own_role(staff):
    client = token_client(staff, Role.READER)
    conflict = refused(client, "post", TOKENS, 409, {"name": "more", "role": "editor"})
    assert conflict["detail"] == "You act as reader in 'default': a token you make cannot be editor."
    made = client.post(TOKENS, {"name": "as much"}, format="json")
    assert made.status_code == 201 and made.json()["role"] == "reader"


def test_a_token_limited_to_a_folder_makes_tokens_limited_to_it(user):
    client = key_client(token_for(user, write_under="/swarmstar/nodes/a/"))
    wider = refused(client, "post", TOKENS, 403, {"name": "x", "write_under": "/swarmstar/"})
    assert wider["detail"] == (
        "A token that writes only under /swarmstar/nodes/a/ makes tokens that write only under it."
    )
    assert client.post(TOKENS, {"name": "same"}, format="json").json()["write_under"] == "/swarmstar/nodes/a/"
    narrower = client.post(TOKENS, {"name": "in", "write_under": "/swarmstar/nodes/a/b/"}, format="json")
    assert narrower.status_code == 201 and narrower.json()["write_under"] == "/swarmstar/nodes/a/b/"


def test_an_expiring_token_makes_tokens_that_expire_no_later(user):
    expires_at = timezone.now() + timedelta(days=1)
    client = key_client(token_for(user, expires_at=expires_at))
    later = refused(client, "post", TOKENS, 403, {"name": "x", "expires_in_days": 2})
    assert "makes tokens that expire no later" in later["detail"]
    same = client.post(TOKENS, {"name": "same"}, format="json")
    assert same.status_code == 201
    assert ApiToken.objects.get(pk=same.json()["id"]).expires_at == expires_at


def test_no_token_above_its_members_role(staff, user):
    conflict = refused(token_client(staff), "post", TOKENS, 409, {"name": "x", "role": "owner", "user": user.username})
    assert "cannot be owner" in conflict["detail"]


def test_an_owner_makes_a_token_for_another_member_and_no_one_else_does(staff, user):
    made = token_client(staff).post(TOKENS, {"name": "theirs", "user": user.username}, format="json")
    assert made.status_code == 201 and (made.json()["user"], made.json()["role"]) == (user.username, "editor")
    other = UserFactory(role=Role.EDITOR)
    refusal = refused(token_client(user), "post", TOKENS, 403, {"name": "x", "user": other.username})
    assert refusal["detail"].endswith("this needs an owner.")
    assert token_client(user).post(TOKENS, {"name": "mine", "user": user.username}, format="json").status_code == 201


def test_a_token_for_someone_outside_the_space_is_a_404(staff, lab):
    outsider = UserFactory()
    Membership.objects.filter(user=outsider).delete()
    refusal = refused(token_client(staff), "post", TOKENS, 404, {"name": "x", "user": outsider.username})
    assert refusal["detail"] == f"No member '{outsider.username}' in 'default'."


def test_an_owner_sees_every_token_and_anyone_else_their_own(staff, user):
    token_for(staff)
    token_for(user)
    owner_sees = {entry["user"] for entry in token_client(staff).get(TOKENS).json()["results"]}
    member_sees = {entry["user"] for entry in session_client(user).get(TOKENS).json()["results"]}
    assert owner_sees == {staff.username, user.username}
    assert member_sees == {user.username}


def test_a_member_revokes_their_own_token_once_and_for_all(user):
    mine = token_create(user=user, name="mine").token
    client = session_client(user)
    first = client.delete(f"{TOKENS}{mine.pk}/")
    assert first.status_code == 200 and first.json()["revoked_at"] is not None
    again = client.delete(f"{TOKENS}{mine.pk}/")
    assert again.status_code == 200 and again.json()["revoked_at"] == first.json()["revoked_at"]


def test_another_members_token_is_a_404_but_to_an_owner(staff, user):
    theirs = token_create(user=staff, name="theirs").token
    url = f"{TOKENS}{theirs.pk}/"
    assert refused(session_client(user), "delete", url, 404)["detail"] == f"No token {theirs.pk} in 'default'."
    assert refused(session_client(user), "delete", f"{TOKENS}999999/", 404)["detail"] == "No token 999999 in 'default'."
    mine = token_create(user=user, name="mine").token
    assert token_client(staff).delete(f"{TOKENS}{mine.pk}/").json()["revoked_at"] is not None


def test_a_token_of_another_space_is_a_404(staff, lab):
    membership_set(space=lab, user=staff, role=Role.OWNER)
    elsewhere = token_create(user=staff, space=lab, name="lab's").token
    assert refused(session_client(staff), "delete", f"{TOKENS}{elsewhere.pk}/", 404)
