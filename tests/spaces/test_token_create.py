"""`manage.py token_create` prints a new token's key, once; the key authenticates its user. A
token is an editor unless another role is asked for, and manages the space only with `--manage`."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from memsite.spaces.logic import key_digest
from memsite.spaces.models import ApiToken

pytestmark = pytest.mark.django_db


def token_create(*arguments: str) -> str:
    out = StringIO()
    call_command("token_create", *arguments, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_the_key_printed_is_the_tokens(user, internal):
    key = token_create("--user", user.username, "--name", "swarm node a", "--write-under", "/swarmstar/nodes/a/")
    token = ApiToken.objects.get(digest=key_digest(key))
    assert (token.user, token.name, token.role, token.write_under, token.expires_at) == (
        user,
        "swarm node a",
        "editor",
        "/swarmstar/nodes/a/",
        None,
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/nodes/roots/").status_code == 200


def test_a_swarm_nodes_token_of_an_owner_is_an_editor_that_manages_nothing(staff):
    """The README's command for a node, run for the space's owner."""
    key = token_create("--user", staff.username, "--name", "swarm node a")
    token = ApiToken.objects.get(digest=key_digest(key))
    assert (token.role, token.manage) == ("editor", False)
    refused = APIClient()
    refused.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert refused.patch("/api/spaces/default/", {"name": "Mine"}, format="json").status_code == 403


def test_an_owner_token_that_manages_is_asked_for_by_name(staff):
    key = token_create("--user", staff.username, "--role", "owner", "--manage")
    token = ApiToken.objects.get(digest=key_digest(key))
    assert (token.role, token.manage) == ("owner", True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.patch("/api/spaces/default/", {"name": "Mine"}, format="json").status_code == 200


def test_a_role_and_an_expiry(staff):
    key = token_create("--user", staff.username, "--role", "reader", "--expires-days", "30")
    token = ApiToken.objects.get(digest=key_digest(key))
    assert token.role == "reader"
    assert 29 < (token.expires_at - timezone.now()).total_seconds() / 86_400 <= 30


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--user", "nobody"], "No user 'nobody'."),
        (["--role", "owner"], "cannot be owner"),
        (["--expires-days", "0"], "1 or more"),
        (["--write-under", "nodes"], "write_under"),
        (["--manage"], "ask for the role owner, not editor"),
    ],
)
def test_refusals_say_why(user, arguments, message):
    arguments = ["--user", user.username, *arguments] if "--user" not in arguments else arguments
    with pytest.raises(CommandError, match=message):
        token_create(*arguments)
    assert not ApiToken.objects.exists()


def test_a_token_limited_to_a_folder_cannot_manage(staff):
    with pytest.raises(CommandError, match="cannot have the manage scope"):
        token_create("--user", staff.username, "--role", "owner", "--manage", "--write-under", "/swarmstar/")
    assert not ApiToken.objects.exists()
