import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0013_space"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.AlterField(
            model_name="node",
            name="space",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="spaces.space"),
        ),
        migrations.AlterField(
            model_name="search",
            name="space",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"),
        ),
    ]
