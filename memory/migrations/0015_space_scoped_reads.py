import django.db.models.deletion
import django.db.models.functions.text
from django.db import migrations, models

from memsite.spaces.backfill import into_default_space


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_space_required"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="node",
            name="memory_node_lower_name_path",
        ),
        migrations.AddIndex(
            model_name="node",
            index=models.Index(
                django.db.models.functions.text.Lower("name"), "space", "path", name="memory_node_lower_name_space"
            ),
        ),
        migrations.AddField(
            model_name="nodeevent",
            name="space",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"
            ),
        ),
        migrations.AddField(
            model_name="nodeevent",
            name="token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.apitoken",
            ),
        ),
        into_default_space("memory", "NodeEvent"),
    ]
