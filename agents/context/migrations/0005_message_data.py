from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("context", "0004_alter_summary_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="data",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
