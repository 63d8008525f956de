from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0004_llmcall_token"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="llmcall",
            options={"ordering": ["-created_at", "-id"], "verbose_name": "LLM call"},
        ),
    ]
