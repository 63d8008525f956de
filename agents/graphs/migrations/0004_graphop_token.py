import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("graphs", "0003_space_required"),
        ("spaces", "0004_token_budget"),
    ]

    operations = [
        migrations.AddField(
            model_name="graphop",
            name="token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.apitoken",
            ),
        ),
    ]
