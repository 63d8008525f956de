import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_space_scoped_reads"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.AlterField(
            model_name="nodeevent",
            name="space",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"),
        ),
    ]
