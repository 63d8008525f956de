import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("llm", "0003_space"),
        ("spaces", "0004_token_budget"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="llmcall",
            name="token",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.apitoken",
            ),
        ),
        migrations.AddIndex(
            model_name="llmcall",
            index=models.Index(fields=["token", "created_at"], name="llm_call_token_day_idx"),
        ),
    ]
