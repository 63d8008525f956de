import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("brains", "0001_initial"),
        ("spaces", "0004_token_budget"),
    ]

    operations = [
        migrations.AddField(
            model_name="brain",
            name="tick_queued_token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.apitoken",
            ),
        ),
        migrations.AddField(
            model_name="brain",
            name="ticking_token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.apitoken",
            ),
        ),
        migrations.AddField(
            model_name="tickrun",
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
