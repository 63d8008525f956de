"""A graph operation says whose it is: a user's, or memsite's own. Operations kept so far with no
user and no token become memsite's: whose they were can no longer be told."""

from django.db import migrations, models


def mark_system_operations(apps, schema_editor):
    GraphOp = apps.get_model("graphs", "GraphOp")
    GraphOp.objects.filter(created_by__isnull=True, token__isnull=True).update(acted_as="system")


class Migration(migrations.Migration):
    dependencies = [
        ("graphs", "0005_graphop_sent_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="graphop",
            name="acted_as",
            field=models.CharField(choices=[("user", "user"), ("system", "system")], default="user", max_length=8),
        ),
        migrations.RunPython(mark_system_operations, migrations.RunPython.noop),
    ]
