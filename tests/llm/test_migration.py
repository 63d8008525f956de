"""Migration llm 0006 names whose work each ledger row was: rows with no user (and no token) were
memsite's own upkeep and become its; the others stay a user's."""

import pytest

from tests.migrations import migrate_to, migrate_to_latest

BEFORE, AFTER = ("llm", "0005_alter_llmcall_options"), ("llm", "0006_acted_as")


@pytest.mark.django_db(transaction=True)
def test_rows_of_no_user_become_memsites_own():
    try:
        apps = migrate_to(BEFORE)
        User, Space, LLMCall = (
            apps.get_model(*name) for name in (("auth", "User"), ("spaces", "Space"), ("llm", "LLMCall"))
        )
        ada = User.objects.create(username="ada")
        space = Space.objects.get_or_create(slug="default", defaults={"name": "Default"})[0]
        row = {"purpose": "route", "provider": "offline", "model": "offline", "status": "ok", "space": space}
        users = LLMCall.objects.create(**row, user=ada).pk
        gone = LLMCall.objects.create(**{**row, "space": None}, user=ada).pk  # a deleted space's, kept
        own = LLMCall.objects.create(**{**row, "purpose": "describe"}).pk

        apps = migrate_to(AFTER)
        acted = dict(apps.get_model("llm", "LLMCall").objects.values_list("pk", "acted_as"))
        assert acted == {users: "user", gone: "user", own: "system"}
    finally:
        migrate_to_latest()
