import django.db.models.deletion
from django.db import migrations, models

from memsite.spaces.backfill import into_default_space


class Migration(migrations.Migration):
    dependencies = [
        ("graphs", "0001_initial"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.AddField(
            model_name="graph",
            name="space",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"
            ),
        ),
        into_default_space("graphs", "Graph"),
    ]
