import pytest

from agents.context import services
from agents.context.models import Checkpoint
from agents.context.selectors.assembly import context_assemble
from memsite.errors import InvalidInput, NotFound
from tests.agents.support import random_conversation, say, stored
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def comparable(state: tuple[dict, list[dict]]) -> tuple[dict, list[dict]]:
    """The stored state without what a restore legitimately renews: row ids and updated_at."""
    row, messages = state
    row = {key: value for key, value in row.items() if key != "updated_at"}
    return row, [{key: value for key, value in message.items() if key != "id"} for message in messages]


def test_a_checkpoint_restores_the_agent_and_its_conversation_exactly():
    agent = AgentFactory(
        instructions="You help $user.", context_variables={"user": "Ada", "token": "s3cret"}, turn_input_limit=1_000
    )
    random_conversation(agent, seed=3, length=40)
    services.message_append(
        agent=agent,
        role="assistant",
        tool_calls=[{"id": "open", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    )
    before = stored(agent)
    context_before = context_assemble(agent=agent)

    checkpoint = services.checkpoint_create(agent=agent)
    services.message_append(agent=agent, role="tool", tool_call_id="open", content="done")
    say(agent, 50)
    services.agent_update(
        agent=agent, changes={"model": "gpt-4o", "context_variables": {"user": "Bob"}, "strategy": "importance"}
    )

    restored = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert comparable(stored(restored)) == comparable(before)
    assert restored.pending_tool_calls == [{"id": "open", "name": "f"}]
    assert context_assemble(agent=restored) == context_before


def test_versions_count_up_per_agent():
    agent, other = AgentFactory(), AgentFactory()
    say(agent, 10)

    first = services.checkpoint_create(agent=agent)
    second = services.checkpoint_create(agent=agent)
    elsewhere = services.checkpoint_create(agent=other)

    assert (first.version, second.version, elsewhere.version) == (1, 2, 1)
    assert (first.message_count, elsewhere.message_count) == (1, 0)
    assert first.document["format"] == 1


def test_restoring_keeps_the_name_and_the_other_checkpoints():
    agent = AgentFactory(name="before")
    checkpoint = services.checkpoint_create(agent=agent)
    services.agent_update(agent=agent, changes={"name": "after"})
    later = services.checkpoint_create(agent=agent)

    restored = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert restored.name == "after"
    assert set(Checkpoint.objects.filter(agent=agent)) == {checkpoint, later}


def test_another_agents_checkpoint_is_not_found():
    agent, other = AgentFactory(), AgentFactory()
    with pytest.raises(NotFound):
        services.checkpoint_restore(agent=agent, checkpoint=services.checkpoint_create(agent=other))


def test_a_damaged_document_changes_nothing():
    agent = AgentFactory()
    say(agent, 10)
    checkpoint = services.checkpoint_create(agent=agent)
    say(agent, 20)
    before = stored(agent)

    messages = checkpoint.document["messages"]
    checkpoint.document["messages"] = [*messages, {**messages[0], "role": "robot"}]
    with pytest.raises(InvalidInput):
        services.checkpoint_restore(agent=agent, checkpoint=checkpoint)
    checkpoint.document["format"] = 2
    with pytest.raises(InvalidInput, match="format 1"):
        services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert stored(agent) == before


def test_the_chat_apis_fields_are_restored_too():
    agent = AgentFactory()
    services.message_append(
        agent=agent,
        role="user",
        name="ada",
        content=[
            {
                "type": "image_url",
                "image_url": {"url": "https://ops.example/a.png", "detail": "low"},
            }
        ],
    )
    services.message_append(
        agent=agent,
        role="assistant",
        content=None,
        refusal="No.",
        audio={"id": "audio_1", "transcript": "No."},
    )
    services.message_append(agent=agent, role="assistant", content="From a note.", data={"provider": "offline"})
    services.message_append(agent=agent, role="assistant", function_call={"name": "lookup", "arguments": "{}"})
    before = stored(agent)
    checkpoint = services.checkpoint_create(agent=agent)
    services.message_append(agent=agent, role="function", name="lookup", content="42")

    restored = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert comparable(stored(restored)) == comparable(before)
    assert restored.messages.get(content="From a note.").data == {"provider": "offline"}


def test_a_document_written_before_the_chat_apis_other_fields_restores_them_empty():
    agent = AgentFactory()
    say(agent, 10)
    checkpoint = services.checkpoint_create(agent=agent)
    later = ("content_parts", "name", "refusal", "audio", "function_call", "annotations")
    checkpoint.document["messages"] = [
        {key: value for key, value in entry.items() if key not in later} for entry in checkpoint.document["messages"]
    ]
    before = stored(agent)
    say(agent, 20)

    restored = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert comparable(stored(restored)) == comparable(before)


def test_a_document_written_before_chat_lines_were_messages_restores_their_data_empty():
    agent = AgentFactory()
    say(agent, 10)
    checkpoint = services.checkpoint_create(agent=agent)
    for entry in checkpoint.document["messages"]:
        del entry["data"]
    before = stored(agent)
    services.message_append(agent=agent, role="assistant", content="Later.", data={"provider": "offline"})

    restored = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)

    assert comparable(stored(restored)) == comparable(before)
    assert not restored.messages.exclude(data={}).exists()
