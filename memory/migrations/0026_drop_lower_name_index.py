"""The index on a node's lower-cased name served the named ranking, which retrieve no longer has
(docs/retrieval.md, "Two rankings"): every node write paid for it, and no query reads it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0025_json_chats_a_message_each"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="node",
            name="memory_node_lower_name_space",
        ),
    ]
