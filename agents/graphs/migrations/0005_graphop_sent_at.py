from django.db import migrations, models


def queued_were_sent(apps, schema_editor):
    """Operations queued before sent_at was kept: the broker took their graph's work then, or
    the sweep sent it again, so they wait their turn there."""
    graph_op = apps.get_model("graphs", "GraphOp")
    graph_op.objects.filter(status="queued").update(sent_at=models.F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("graphs", "0004_graphop_token"),
    ]

    operations = [
        migrations.AddField(
            model_name="graphop",
            name="sent_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(queued_were_sent, migrations.RunPython.noop),
    ]
