"""Every kind of token against every way of managing a space through the API: its members, its
tokens, its settings, deleting it. Only a token with the owner role and the manage scope, and an
owner's session, may; any other try is refused, saying why, and changes nothing at all."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memsite.spaces.logic import MANAGE_NEEDS, Role
from memsite.spaces.models import ApiToken, Space
from memsite.spaces.services import membership_set, space_create, token_create, token_revoke
from tests.factories import UserFactory
from tests.security.test_authorization import fingerprint

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Lab:
    space: Space
    owner: object
    member: object  # an editor, whom the calls promote or remove
    theirs: ApiToken  # the member's token, which the calls revoke


@pytest.fixture
def lab() -> Lab:
    owner, member = UserFactory(), UserFactory()
    space = space_create(user=owner, slug="lab", name="Lab")
    membership_set(space=space, member=member, role=Role.EDITOR)
    return Lab(space, owner, member, token_create(member=member, space=space, name="member's node").token)


def key_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def token(lab: Lab, *, spoiled: Callable[[ApiToken], object] = lambda token: None, **options) -> APIClient:
    made = token_create(member=lab.owner, space=lab.space, name="node", **options)
    spoiled(made.token)
    return key_client(made.key)


def expired(made: ApiToken) -> None:
    ApiToken.objects.filter(pk=made.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def session(lab: Lab) -> APIClient:
    client = APIClient()
    client.force_login(lab.owner)
    return client


MANAGER = {"role": Role.OWNER, "manage": True}
# Each kind of caller, all of the space's owner: how to make its client, and the status and the
# words of its refusal (None: it may manage).
KINDS: dict[str, tuple[Callable[[Lab], APIClient], int | None, str]] = {
    "plain": (lambda lab: token(lab), 403, MANAGE_NEEDS),
    "write_under": (lambda lab: token(lab, role=Role.OWNER, write_under="/swarmstar/nodes/b/"), 403, "manages nothing"),
    "editor": (lambda lab: token(lab, role=Role.EDITOR), 403, "Editors can read and write but not manage the space"),
    "owner": (lambda lab: token(lab, role=Role.OWNER), 403, "This token needs the manage scope for this"),
    "owner+manage": (lambda lab: token(lab, **MANAGER), None, ""),
    "revoked": (lambda lab: token(lab, spoiled=lambda made: token_revoke(token=made), **MANAGER), 401, "revoked"),
    "expired": (lambda lab: token(lab, spoiled=expired, **MANAGER), 401, "The token has expired."),
    "owner's session": (session, None, ""),
}
# Each way of managing the space: the call, and what it answers when it may.
ACTIONS: dict[str, tuple[str, Callable[[Lab], str], Callable[[Lab], dict | None], int]] = {
    "member set": ("put", lambda lab: f"members/{lab.member.username}/", lambda lab: {"role": "owner"}, 200),
    "member remove": ("delete", lambda lab: f"members/{lab.member.username}/", lambda lab: None, 204),
    "token make": ("post", lambda lab: "tokens/", lambda lab: {"name": "unrestricted"}, 201),
    "token revoke": ("delete", lambda lab: f"tokens/{lab.theirs.pk}/", lambda lab: None, 200),
    "settings": ("patch", lambda lab: "", lambda lab: {"name": "Mine", "member_llm_daily_calls": 1}, 200),
    "deletion": ("delete", lambda lab: "", lambda lab: {"confirm": "lab"}, 204),
}


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_only_a_managing_token_or_an_owners_session_manages_the_space(lab, kind, action):
    client_of, refusal_status, refusal = KINDS[kind]
    method, path, body, status = ACTIONS[action]
    client = client_of(lab)
    before = fingerprint()

    url = f"/api/spaces/lab/{path(lab)}"
    response = getattr(client, method)(url, body(lab), format="json")

    if refusal_status is None:
        assert response.status_code == status, response.content
        assert fingerprint() != before
    else:
        assert response.status_code == refusal_status, response.content
        assert refusal in response.json()["detail"]
        assert fingerprint() == before, "a refused try changed the database"


def test_a_plain_token_is_an_editor_though_its_member_owns_the_space(lab):
    assert token_create(member=lab.owner, space=lab.space, name="node").token.role == Role.EDITOR
