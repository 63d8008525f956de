"""API tokens: `Token <key>` or `Bearer <key>`; unknown, revoked, expired keys and keys whose
user left the space are 401s that say which; a token acts with the lower of its role and its
member's; its use is noted at most once a minute, and only for calls it was not refused."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memsite.errors import Conflict, InvalidInput
from memsite.spaces.logic import Role, key_digest
from memsite.spaces.models import ApiToken, Membership
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create, token_revoke
from tests.factories import default_space, token_for

pytestmark = pytest.mark.django_db
ROOTS = "/api/nodes/roots/"


def client_with(key: str, keyword: str = "Token") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} {key}")
    return client


def token_of(key: str) -> ApiToken:
    return ApiToken.objects.get(digest=key_digest(key))


@pytest.mark.parametrize("keyword", ["Token", "Bearer", "bearer"])
def test_a_good_key_authenticates_its_user_with_either_keyword(user, internal, keyword):
    response = client_with(token_for(user), keyword).get(ROOTS)
    assert response.status_code == 200
    assert response.wsgi_request.user == user
    assert isinstance(response.wsgi_request.auth, ApiToken)


def test_only_the_digest_and_a_prefix_of_the_key_are_kept(user):
    made = token_create(member=user, space=default_space(), name="swarm node a")
    row = ApiToken.objects.get(pk=made.token.pk)
    assert row.digest == key_digest(made.key) and row.prefix == made.key[:8]
    stored = {str(value) for value in ApiToken.objects.filter(pk=row.pk).values().get().values()}
    assert made.key not in stored


def refusal(key: str) -> tuple[int, str, str]:
    response = client_with(key).get(ROOTS)
    return response.status_code, response.json()["detail"], response.get("WWW-Authenticate", "")


def test_an_unknown_key_is_refused(user):
    assert refusal("ms_not-a-key") == (401, "Invalid token.", "Token")


def test_a_revoked_key_is_refused(user):
    key = token_for(user)
    token_revoke(token=token_of(key))
    assert refusal(key) == (401, "The token has been revoked.", "Token")


def test_an_expired_key_is_refused(user, internal):
    key = token_for(user, expires_at=timezone.now() + timedelta(hours=1))
    assert client_with(key).get(ROOTS).status_code == 200
    ApiToken.objects.filter(digest=key_digest(key)).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert refusal(key) == (401, "The token has expired.", "Token")


def test_a_key_whose_user_left_the_space_is_refused(user):
    key = token_for(user)
    Membership.objects.filter(user=user).delete()
    assert refusal(key) == (401, "The token's user is no longer a member of its space.", "Token")


def test_a_key_of_an_inactive_user_is_refused(user):
    key = token_for(user)
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert refusal(key) == (401, "The token's user is inactive.", "Token")


def test_a_lowered_membership_lowers_its_tokens_at_once(user, internal):
    client = client_with(token_for(user))
    membership_set(space=space_default(), member=user, role=Role.READER)
    response = client.post("/api/nodes/", {"parent": internal["user"].pk, "type": "folder", "name": "x"}, format="json")
    assert response.status_code == 403
    assert response.json()["detail"] == "Readers can only read; this needs an editor."
    assert client.get(ROOTS).status_code == 200


def test_a_token_cannot_be_made_above_its_members_role(user, staff):
    with pytest.raises(Conflict, match="cannot be owner"):
        token_create(member=user, space=default_space(), name="too much", role=Role.OWNER)
    with pytest.raises(InvalidInput, match="No role 'admin'"):
        token_create(member=user, space=default_space(), name="no such role", role="admin")
    assert (
        token_create(member=staff, space=default_space(), name="owner's reader", role=Role.READER).token.role
        == Role.READER
    )
    assert token_create(member=user, space=default_space(), name="their own").token.role == Role.EDITOR


def test_a_token_for_someone_outside_the_space_is_refused(user):
    Membership.objects.filter(user=user).delete()
    with pytest.raises(Conflict, match="not a member"):
        token_create(member=user, space=default_space(), name="nobody's")


def test_write_under_is_kept_and_checked(user):
    assert (
        token_create(member=user, space=default_space(), name="a", write_under="/swarmstar/nodes/a/").token.write_under
        == "/swarmstar/nodes/a/"
    )
    with pytest.raises(InvalidInput, match="write_under"):
        token_create(member=user, space=default_space(), name="b", write_under="swarmstar")


def test_a_use_is_noted_once_a_minute_and_never_for_a_refused_call(user, internal):
    key = token_for(user)
    client = client_with(key)
    assert client.post("/api/nodes/", {}, format="json").status_code == 400
    assert token_of(key).last_used_at is None
    assert client.get(ROOTS).status_code == 200
    first = token_of(key).last_used_at
    assert first is not None
    assert client.get(ROOTS).status_code == 200
    assert token_of(key).last_used_at == first
    ApiToken.objects.filter(digest=key_digest(key)).update(last_used_at=first - timedelta(minutes=1))
    assert client.get(ROOTS).status_code == 200
    assert token_of(key).last_used_at > first
