"""The day a node and its passages speak of (docs/retrieval.md, "Time"): a node's `date`, as its
writer gives it, and each passage's, which retrieve's time window filters by. The passages
already there are dated as new ones are: no node had a date given, so each node's is read from
its description (one memsite wrote aside) or its text's first lines, and its dated lines date
the passages after them."""

from django.db import migrations, models

NODES_PER_READ = 200
MAX_BYTES = 2_000_000  # what the index cuts of a node's content (MEMSITE_INDEX_MAX_BYTES)


def _text(data) -> str:
    raw = bytes(data[:MAX_BYTES]) if data is not None else b""
    return "" if b"\x00" in raw[:8192] else raw.decode("utf-8", errors="replace")


def date_existing(apps, schema_editor):
    from memory.logic.dates import Timeline, document_date

    Node = apps.get_model("memory", "Node")
    Passage = apps.get_model("memory", "Passage")
    nodes = Node.objects.values_list("id", "description", "description_auto", "content__data")
    for node_id, description, description_auto, data in nodes.iterator(chunk_size=NODES_PER_READ):
        text = _text(data)
        start_date = document_date(given=None, description="" if description_auto else description, text=text)
        timeline = Timeline(text, start_date=start_date)
        if start_date is None and not timeline.offsets:
            continue
        dated = []
        for passage in Passage.objects.filter(node_id=node_id).only("id", "kind", "start"):
            passage.date = start_date if passage.kind == "label" else timeline.at(passage.start)
            if passage.date is not None:
                dated.append(passage)
        Passage.objects.bulk_update(dated, ["date"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0023_passages_a_turn_each"),
    ]

    operations = [
        migrations.AddField(
            model_name="node",
            name="date",
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="passage",
            name="date",
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="passage",
            index=models.Index(
                condition=models.Q(("date__isnull", False)), fields=["date"], name="memory_passage_dated"
            ),
        ),
        migrations.RunPython(date_existing, migrations.RunPython.noop),
    ]
