"""A search says whose it is: a user's, or memsite's own. Searches kept so far with no user and
no token become memsite's: whose they were can no longer be told."""

from django.db import migrations, models


def mark_system_searches(apps, schema_editor):
    Search = apps.get_model("memory", "Search")
    Search.objects.filter(created_by__isnull=True, token__isnull=True).update(acted_as="system")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0020_search_sent_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="search",
            name="acted_as",
            field=models.CharField(choices=[("user", "user"), ("system", "system")], default="user", max_length=8),
        ),
        migrations.RunPython(mark_system_searches, migrations.RunPython.noop),
    ]
