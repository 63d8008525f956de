import importlib

from django.db import migrations


def recut(apps, schema_editor):
    """Passages are now a turn each in a dialogue and a paragraph each elsewhere
    (memory/index/passages.py): every node is cut again as 0006 cut it, and beat's sweep embeds
    the new passages."""
    apps.get_model("memory", "Passage").objects.all().delete()
    importlib.import_module("memory.migrations.0006_content_index").index_existing(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0022_node_versions"),
    ]

    operations = [
        migrations.RunPython(recut, migrations.RunPython.noop),
    ]
