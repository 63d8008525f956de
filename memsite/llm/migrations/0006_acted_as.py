"""Every ledger row names whose work it was: a user's, or memsite's own. Rows kept so far with
no user (and no token) were the space's own upkeep: they become memsite's."""

from django.conf import settings
from django.db import migrations, models


def mark_system_rows(apps, schema_editor):
    LLMCall = apps.get_model("llm", "LLMCall")
    LLMCall.objects.filter(user__isnull=True, token__isnull=True).update(acted_as="system")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("llm", "0005_alter_llmcall_options"),
        ("spaces", "0005_alter_apitoken_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="llmcall",
            name="acted_as",
            field=models.CharField(choices=[("user", "user"), ("system", "system")], default="user", max_length=8),
        ),
        migrations.RunPython(mark_system_rows, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="llmcall",
            constraint=models.CheckConstraint(
                condition=models.Q(("acted_as__in", ["user", "system"])), name="llm_call_acted_as_valid"
            ),
        ),
        migrations.AddConstraint(
            model_name="llmcall",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("acted_as", "user"), models.Q(("token__isnull", True), ("user__isnull", True)), _connector="OR"
                ),
                name="llm_call_system_has_no_user",
            ),
        ),
    ]
