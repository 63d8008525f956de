"""Migration context 0006 moves the brains' chat records into their agents' conversations: each
line where its time puts it, the messages there kept in their order (a tool call with its
results, calls still waiting last), the ledger's calls following the lines; run again, nothing."""

import importlib
from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import default_space
from tests.migrations import migrate_to, migrate_to_latest

# Before the move, with the ledger and the content types as they are (the move's dependencies).
BEFORE = [
    ("context", "0005_message_data"),
    ("brains", "0002_tick_tokens"),
    ("llm", "0006_acted_as"),
    ("contenttypes", "0002_remove_content_type_name"),
]
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MIGRATION = importlib.import_module("agents.context.migrations.0006_chat_lines_into_messages")


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


class OldRows:
    """Rows as they were before the move, written with the models of that time."""

    def __init__(self, apps, space_id: int):
        self.apps, self.space_id = apps, space_id

    def model(self, app: str, name: str):
        return self.apps.get_model(app, name)

    def agent(self, name: str, **fields):
        agent = self.model("context", "Agent").objects.create(
            name=name, model="gpt-4", space_id=self.space_id, **fields
        )
        self.model("brains", "Brain").objects.create(agent=agent, record_seqs={"chat": 0}, record_floors={"chat": 0})
        return agent

    def message(self, agent, role: str, content: str, minutes: int, **fields) -> None:
        position = agent.message_count + 1
        offset = agent.history_tokens
        self.model("context", "Message").objects.create(
            agent=agent,
            position=position,
            role=role,
            content=content,
            token_count=10,
            token_encoding="cl100k_base",
            tokens_approximate=False,
            history_offset=offset,
            created_at=at(minutes),
            **fields,
        )
        agent.message_count, agent.conversation_tokens = position, agent.conversation_tokens + 10
        agent.history_tokens = offset + (0 if fields.get("pinned") else 10)
        agent.save()

    def line(self, agent, role: str, text: str, minutes: int, **entry):
        brain = self.model("brains", "Brain").objects.get(agent=agent)
        brain.record_seqs["chat"] += 1
        brain.save()
        data = {"t": 0, "content": text, "role": role, **entry}
        return self.model("brains", "Record").objects.create(
            brain=brain, kind="chat", seq=brain.record_seqs["chat"], text=text, data=data, created_at=at(minutes)
        )


CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
CITED = [{"id": "fact:1", "kind": "fact", "ref": "1", "label": "fact 1"}]


def _old_rows(apps, space_id: int) -> dict[str, int]:
    """`mixed`: a conversation with a pinned message, a tool call and its result, and chat lines
    between them, one served by a ledger call; `chat`: chat lines only; `waiting`: a tool call
    still waiting for its result, older than a chat line."""
    old = OldRows(apps, space_id)
    mixed = old.agent("mixed")
    old.message(mixed, "system", "Be brief.", 0, pinned=True)
    old.message(mixed, "assistant", "", 2, tool_calls=[CALL])
    old.message(mixed, "tool", "3 notes", 3, tool_call_id="call_1", tool_name="lookup")
    old.message(mixed, "user", "And the deploy?", 5, references=[2])
    asked = old.line(mixed, "user", "What is in /ops?", 1)
    old.line(mixed, "assistant", "Three notes.", 2, citations=CITED, provider="openai")  # between call and result
    old.line(mixed, "user", "", 4)  # no text: no message
    old.line(mixed, "assistant", "The deploy needs a migration.", 6)
    old.model("context", "Summary").objects.create(agent=mixed, through=2)
    ContentType = old.model("contenttypes", "ContentType")
    record_type, _ = ContentType.objects.get_or_create(app_label="brains", model="record")
    call = old.model("llm", "LLMCall").objects.create(
        purpose="chat", provider="openai", model="gpt-4", status="ok", served_type=record_type, served_id=asked.pk
    )
    chat = old.agent("chat")
    old.line(chat, "user", "Hello.", 1)
    old.line(chat, "assistant", "Hi.", 2)
    waiting = old.agent("waiting", pending_tool_calls=[{"id": "call_1", "name": "lookup"}])
    old.message(waiting, "user", "Look it up.", 0)
    old.message(waiting, "assistant", "", 1, tool_calls=[CALL])
    old.line(waiting, "user", "Still there?", 2)
    return {"mixed": mixed.pk, "chat": chat.pk, "waiting": waiting.pk, "call": call.pk}


def conversation(apps, agent_id: int) -> list[tuple]:
    messages = apps.get_model("context", "Message").objects.filter(agent_id=agent_id).order_by("position")
    return list(messages.values_list("position", "role", "content", "created_at"))


def _check_mixed(apps, ids: dict[str, int]) -> None:
    assert conversation(apps, ids["mixed"]) == [
        (1, "system", "Be brief.", at(0)),
        (2, "user", "What is in /ops?", at(1)),
        (3, "assistant", "", at(2)),  # the call keeps its result: the line of its time comes after both
        (4, "tool", "3 notes", at(3)),
        (5, "assistant", "Three notes.", at(2)),
        (6, "user", "And the deploy?", at(5)),
        (7, "assistant", "The deploy needs a migration.", at(6)),
    ]
    Message = apps.get_model("context", "Message")
    messages = list(Message.objects.filter(agent_id=ids["mixed"]).order_by("position"))
    assert messages[5].references == [3]  # it built on the call, moved from 2 to 3
    assert messages[4].data["citations"] == CITED and messages[4].data["provider"] == "openai"
    offsets = [message.history_offset for message in messages]
    unpinned = [0 if message.pinned else message.token_count for message in messages]
    assert offsets == [sum(unpinned[:index]) for index in range(len(messages))]
    agent = apps.get_model("context", "Agent").objects.get(pk=ids["mixed"])
    assert agent.message_count == 7 and agent.history_tokens == sum(unpinned)
    assert agent.conversation_tokens == sum(message.token_count for message in messages)
    assert not apps.get_model("context", "Summary").objects.filter(agent_id=ids["mixed"]).exists()
    call = apps.get_model("llm", "LLMCall").objects.get(pk=ids["call"])
    assert (call.served_type.app_label, call.served_type.model, call.served_id) == (
        "context",
        "message",
        messages[1].pk,
    )


@pytest.mark.django_db(transaction=True)
def test_chat_records_become_messages_in_the_order_of_their_times():
    try:
        space_id = default_space().pk
        ids = _old_rows(migrate_to(*BEFORE), space_id)

        apps = migrate_to_latest()

        _check_mixed(apps, ids)
        assert [row[1:3] for row in conversation(apps, ids["chat"])] == [("user", "Hello."), ("assistant", "Hi.")]
        assert [row[1:3] for row in conversation(apps, ids["waiting"])] == [
            ("user", "Look it up."),
            ("user", "Still there?"),  # before the call that still waits for its result
            ("assistant", ""),
        ]
        assert not apps.get_model("brains", "Record").objects.exists()
        brains = apps.get_model("brains", "Brain").objects.all()
        assert all("chat" not in brain.record_seqs and "chat" not in brain.record_floors for brain in brains)

        before = {agent_id: conversation(apps, agent_id) for agent_id in (ids["mixed"], ids["chat"])}
        MIGRATION.move_chat_lines(apps, None)  # again: no chat record is left, nothing moves
        assert {agent_id: conversation(apps, agent_id) for agent_id in before} == before
    finally:
        migrate_to_latest()


def test_lines_and_units_merge_by_time_the_messages_first_among_equals():
    class Row:
        def __init__(self, content, role, minutes):
            self.content, self.role, self.created_at = content, role, at(minutes)

    units = MIGRATION._units([Row("a", "user", 0), Row("b", "assistant", 2), Row("c", "tool", 9), Row("d", "user", 5)])
    lines = [MIGRATION._Line(1, "user", "x", {}, at(2)), MIGRATION._Line(2, "user", "y", {}, at(7))]

    order = MIGRATION.merged(units, lines, waiting=False)
    held = MIGRATION.merged(units, lines, waiting=True)

    assert [item.content for item in order] == ["a", "b", "c", "x", "d", "y"]
    assert [item.content for item in held] == ["a", "b", "c", "x", "y", "d"]
