from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0017_search_token"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="search",
            options={"ordering": ["-created_at", "-id"], "verbose_name_plural": "searches"},
        ),
    ]
