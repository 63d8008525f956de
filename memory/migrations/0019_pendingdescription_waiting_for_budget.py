from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0018_alter_search_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="pendingdescription",
            name="waiting_for_budget",
            field=models.BooleanField(default=False),
        ),
    ]
