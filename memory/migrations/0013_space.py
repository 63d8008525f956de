import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from memsite.spaces.backfill import into_default_space


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_node_events"),
        ("spaces", "0002_default_space"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="node",
            name="memory_node_unique_root_name",
        ),
        migrations.AddField(
            model_name="node",
            name="space",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="spaces.space"
            ),
        ),
        migrations.AddField(
            model_name="search",
            name="space",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"
            ),
        ),
        into_default_space("memory", "Node", "Search"),
        migrations.AddIndex(
            model_name="search",
            index=models.Index(fields=["space", "-created_at"], name="memory_search_space_recent"),
        ),
        migrations.AddConstraint(
            model_name="node",
            constraint=models.UniqueConstraint(
                condition=models.Q(("parent__isnull", True)),
                fields=("space", "name"),
                name="memory_node_unique_root_name",
            ),
        ),
    ]
