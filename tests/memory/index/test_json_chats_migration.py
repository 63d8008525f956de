"""Migration 0025 cuts the JSON chats already indexed again, a message each, and leaves every
other node's passages as they were."""

import json

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest, old_node

BEFORE, AFTER = ("memory", "0024_dates"), ("memory", "0025_json_chats_a_message_each")
MESSAGES = [
    {"role": "user", "content": "Which day is the last frost in Tartu?"},
    {"role": "assistant", "content": "Around the twentieth of May; plant tomatoes out after it."},
]
CHAT = json.dumps(MESSAGES)
NOTE = "Ana: Pixel sleeps all day.\nBo: So do I."


@pytest.mark.django_db(transaction=True)
def test_a_json_chat_indexed_before_becomes_a_message_each_and_other_nodes_stay():
    space_id = default_space().pk
    apps = migrate_to(BEFORE)
    Passage = apps.get_model("memory", "Passage")
    chat = old_node(apps, path="Z000", name="chat.json", description="Chat, 2024-05-02", space_id=space_id, text=CHAT)
    note = old_node(apps, path="Z001", name="note.md", description="A note", space_id=space_id, text=NOTE)
    Passage.objects.create(node=chat, seq=1, kind="content", start=0, end=len(CHAT), text=CHAT)
    kept = Passage.objects.create(node=note, seq=1, kind="content", start=0, end=len(NOTE), text=NOTE)
    try:
        apps = migrate_to(AFTER)
        Passage = apps.get_model("memory", "Passage")
        rows = list(Passage.objects.filter(node_id=chat.pk, kind="content").order_by("seq"))
        assert [row.text for row in rows] == [json.dumps(message) for message in MESSAGES]
        assert [CHAT[row.start : row.end] for row in rows] == [row.text for row in rows]
        assert {str(row.date) for row in rows} == {"2024-05-02"} and all(row.vector is None for row in rows)
        assert list(Passage.objects.filter(node_id=note.pk, kind="content").values_list("pk", flat=True)) == [kept.pk]
    finally:
        apps.get_model("memory", "Node").objects.filter(pk__in=[chat.pk, note.pk]).delete()
        migrate_to_latest()
