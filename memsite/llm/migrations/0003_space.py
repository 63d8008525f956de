import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from memsite.spaces.backfill import into_default_space


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("llm", "0002_quota_users"),
        ("spaces", "0003_space_settings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="llmcall",
            name="space",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="spaces.space",
            ),
        ),
        into_default_space("llm", "LLMCall"),
        migrations.AddIndex(
            model_name="llmcall",
            index=models.Index(fields=["space", "created_at"], name="llm_call_space_day_idx"),
        ),
    ]
