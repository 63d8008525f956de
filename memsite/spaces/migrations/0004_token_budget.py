from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("spaces", "0003_space_settings"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="llm_daily_calls",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="llm_daily_tokens",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
    ]
