import django.db.models.deletion
from django.db import migrations, models

from memsite.spaces.backfill import into_default_space


class Migration(migrations.Migration):
    dependencies = [
        ("context", "0001_initial"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="space",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"
            ),
        ),
        into_default_space("context", "Agent"),
        migrations.AlterField(
            model_name="agent",
            name="name",
            field=models.CharField(max_length=200),
        ),
        migrations.AddConstraint(
            model_name="agent",
            constraint=models.UniqueConstraint(fields=("space", "name"), name="agents_agent_name_unique_in_space"),
        ),
    ]
