"""Migration spaces 0002 makes the default space, every user a member of it (superusers its
owners), and every old token an editor ApiToken with the same key, whose plain copy it deletes."""

import pytest
from rest_framework.test import APIClient

from memsite.spaces.logic import key_digest
from tests.migrations import migrate_to, migrate_to_latest

BEFORE, AFTER = ("spaces", "0001_initial"), ("spaces", "0002_default_space")
OLD_TOKENS = ("authtoken", "0004_alter_tokenproxy_options")


@pytest.mark.django_db(transaction=True)
def test_users_become_members_and_old_tokens_keep_working():
    try:
        apps = migrate_to(BEFORE, OLD_TOKENS)
        User, Token = apps.get_model("auth", "User"), apps.get_model("authtoken", "Token")
        assert not apps.get_model("spaces", "Space").objects.exists()
        ada = User.objects.create(username="ada", is_superuser=True, is_staff=True)
        bo = User.objects.create(username="bo")
        User.objects.create(username="cy")
        keys = {
            user.username: Token.objects.create(user=user, key=f"{user.username}-old-key-0123456789").key
            for user in (ada, bo)
        }

        apps = migrate_to(AFTER)
        Membership, ApiToken = apps.get_model("spaces", "Membership"), apps.get_model("spaces", "ApiToken")
        assert {(m.user.username, m.space.slug, m.role) for m in Membership.objects.all()} == {
            ("ada", "default", "owner"),
            ("bo", "default", "editor"),
            ("cy", "default", "editor"),
        }
        tokens = {token.user.username: token for token in ApiToken.objects.all()}
        assert set(tokens) == {"ada", "bo"}
        for username, token in tokens.items():
            assert (token.space.slug, token.role, token.name) == ("default", "editor", "token made before spaces")
            assert token.digest == key_digest(keys[username]) and token.prefix == keys[username][:8]
            assert (token.expires_at, token.revoked_at, token.write_under) == (None, None, "")
        assert not apps.get_model("authtoken", "Token").objects.exists()

        migrate_to_latest()
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {keys['bo']}")
        response = client.get("/api/usage/")
        assert response.status_code == 200 and response.wsgi_request.user.username == "bo"
    finally:
        migrate_to_latest()
