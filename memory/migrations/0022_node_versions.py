"""Documents' versions (NodeVersion), for their history's diffs and restores, and the restore
event, which names the version it brought back. Documents written before keep no earlier
version: each starts its history at its next write."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0021_acted_as"),
    ]

    operations = [
        migrations.AddField(
            model_name="nodeevent",
            name="restored_from",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="nodeevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("create", "created"),
                    ("update", "updated"),
                    ("content", "content written"),
                    ("move", "moved"),
                    ("delete", "deleted"),
                    ("restore", "restored"),
                ],
                max_length=8,
            ),
        ),
        migrations.CreateModel(
            name="NodeVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveIntegerField()),
                ("name", models.CharField(blank=True, max_length=255)),
                ("description", models.TextField(blank=True)),
                ("description_auto", models.BooleanField(default=False)),
                ("data", models.BinaryField(null=True)),
                (
                    "node",
                    models.ForeignKey(
                        db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="memory.node"
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("node", "version"), name="memory_nodeversion_unique")],
            },
        ),
    ]
