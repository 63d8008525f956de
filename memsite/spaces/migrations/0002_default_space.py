"""The default space, with every user a member (superusers its owners, everyone else editors),
and every token of rest_framework.authtoken an editor ApiToken of it with the same key, so
that clients keep working; the plain keys are then deleted. Going back drops the space, its
members and its tokens: the old keys were never kept, and cannot come back."""

import hashlib

from django.conf import settings
from django.db import migrations

DEFAULT_SPACE = "default"
OLD_TOKEN_NAME = "token made before spaces"


def default_space_for_everyone(apps, schema_editor):
    Space, Membership, ApiToken = (apps.get_model("spaces", name) for name in ("Space", "Membership", "ApiToken"))
    User = apps.get_model(settings.AUTH_USER_MODEL)
    Token = apps.get_model("authtoken", "Token")
    space, _ = Space.objects.get_or_create(slug=DEFAULT_SPACE, defaults={"name": "Default"})
    Membership.objects.bulk_create(
        (
            Membership(space=space, user_id=user_id, role="owner" if superuser else "editor")
            for user_id, superuser in User.objects.values_list("pk", "is_superuser").iterator()
        ),
        ignore_conflicts=True,  # a member already keeps their role
    )
    ApiToken.objects.bulk_create(
        ApiToken(
            space=space,
            user_id=user_id,
            name=OLD_TOKEN_NAME,
            role="editor",
            digest=hashlib.sha256(key.encode()).hexdigest(),
            prefix=key[:8],
        )
        for key, user_id in Token.objects.values_list("key", "user_id").iterator()
    )
    Token.objects.all().delete()


def drop_default_space(apps, schema_editor):
    apps.get_model("spaces", "Space").objects.filter(slug=DEFAULT_SPACE).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("spaces", "0001_initial"),
        ("authtoken", "0004_alter_tokenproxy_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(default_space_for_everyone, drop_default_space)]
