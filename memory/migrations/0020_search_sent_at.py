from django.db import migrations, models


def queued_were_sent(apps, schema_editor):
    """Searches queued before sent_at was kept: the broker took their messages then, or the
    sweep sent them again, so they wait their turn there."""
    search = apps.get_model("memory", "Search")
    search.objects.filter(status="queued").update(sent_at=models.F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_pendingdescription_waiting_for_budget"),
    ]

    operations = [
        migrations.AddField(
            model_name="search",
            name="sent_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(queued_were_sent, migrations.RunPython.noop),
    ]
