import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("context", "0002_space"),
        ("spaces", "0002_default_space"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agent",
            name="space",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="spaces.space"),
        ),
    ]
