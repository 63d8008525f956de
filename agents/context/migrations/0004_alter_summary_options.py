from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("context", "0003_space_required"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="summary",
            options={"ordering": ["agent", "through"], "verbose_name_plural": "summaries"},
        ),
    ]
