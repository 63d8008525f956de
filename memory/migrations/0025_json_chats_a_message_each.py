"""A chat stored as JSON is now cut a message each (memory/index/json_turns.py): the nodes
already indexed that hold one are cut again, their passages dated as 0024 dated them, and beat's
sweep embeds the new passages. Other nodes keep their passages: the cut of every other text is
unchanged."""

from django.conf import settings
from django.db import migrations
from django.db.models import BinaryField
from django.db.models.functions import Substr

HEAD_BYTES = 64  # of each node's content, read to tell a JSON document by its first bracket


def _json_candidates(NodeContent) -> list[str]:
    """The nodes whose content starts, past white space, with a bracket or a brace: only their
    first bytes are read, so the migration holds no content it does not cut."""
    head = Substr("data", 1, HEAD_BYTES, output_field=BinaryField())
    rows = NodeContent.objects.values_list("node_id", head).iterator(chunk_size=2_000)
    return [node_id for node_id, data in rows if bytes(data).lstrip()[:1] in (b"[", b"{")]


def recut_json_chats(apps, schema_editor):
    from memory.index.json_turns import message_spans
    from memory.index.passages import cut
    from memory.logic.dates import Timeline, document_date

    Node, NodeContent = apps.get_model("memory", "Node"), apps.get_model("memory", "NodeContent")
    Passage = apps.get_model("memory", "Passage")
    indexed = Substr("content__data", 1, settings.MEMSITE_INDEX_MAX_BYTES, output_field=BinaryField())
    for node_id in _json_candidates(NodeContent):  # one at a time: each may be megabytes
        given, description, description_auto, data = Node.objects.values_list(
            "date", "description", "description_auto", indexed
        ).get(pk=node_id)
        text = bytes(data).decode("utf-8", errors="replace")
        if not message_spans(text):
            continue
        start_date = document_date(given=given, description="" if description_auto else description, text=text)
        timeline = Timeline(text, start_date=start_date)
        Passage.objects.filter(node_id=node_id, kind="content").delete()
        Passage.objects.bulk_create(
            Passage(
                node_id=node_id,
                seq=seq,
                kind="content",
                start=piece.start,
                end=piece.end,
                text=piece.text,
                date=timeline.at(piece.start),
            )
            for seq, piece in enumerate(cut(text), start=1)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0024_dates"),
    ]

    operations = [
        migrations.RunPython(recut_json_chats, migrations.RunPython.noop),
    ]
