"""A chat stored as JSON is now cut a message each (memory/index/json_turns.py): the nodes
already indexed that hold one are cut again, their passages dated as 0024 dated them, and beat's
sweep embeds the new passages. Other nodes keep their passages: the cut of every other text is
unchanged."""

from django.db import migrations

NODES_PER_READ = 200
MAX_BYTES = 2_000_000  # what the index cuts of a node's content (MEMSITE_INDEX_MAX_BYTES)


def _json_text(data) -> str | None:
    """The node's text, if it may be a JSON document: one that starts with a bracket or a brace."""
    raw = bytes(data[:MAX_BYTES]) if data is not None else b""
    if raw.lstrip()[:1] not in (b"[", b"{"):
        return None
    return raw.decode("utf-8", errors="replace")


def recut_json_chats(apps, schema_editor):
    from memory.index.json_turns import message_spans
    from memory.index.passages import cut
    from memory.logic.dates import Timeline, document_date

    Node = apps.get_model("memory", "Node")
    Passage = apps.get_model("memory", "Passage")
    nodes = Node.objects.values_list("id", "date", "description", "description_auto", "content__data")
    for node_id, given, description, description_auto, data in nodes.iterator(chunk_size=NODES_PER_READ):
        text = _json_text(data)
        if text is None or not message_spans(text):
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
