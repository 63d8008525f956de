from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("spaces", "0004_token_budget"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="apitoken",
            options={"verbose_name": "API token"},
        ),
    ]
