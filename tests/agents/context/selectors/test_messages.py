import pytest

from agents.context import selectors
from agents.context.selectors.messages import HistoryPoint
from tests.agents.support import say, tool_exchange
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation():
    """Positions 1-8: 10, 20, pinned 30, 40, 50 tokens of user messages, then a tool exchange."""
    agent = AgentFactory(model="gpt-4")
    say(agent, 10)
    say(agent, 20)
    say(agent, 30, pinned=True)
    say(agent, 40)
    say(agent, 50)
    tool_exchange(agent, ["call_a", "call_b"])
    agent.refresh_from_db()
    return agent


def test_history_is_read_newest_first_in_pages_and_returned_in_order(conversation, monkeypatch):
    monkeypatch.setattr("agents.context.selectors.messages.PAGE_SIZE", 2)

    history = selectors.message_history(agent=conversation, start_position=2, through=8)

    assert [message.position for message in history] == [2, 4, 5, 6, 7, 8]
    assert [message.role for message in history[-3:]] == ["assistant", "tool", "tool"]
    assert history[-1].tool_call_id == "call_b" and history[-3].tool_calls[0]["id"] == "call_a"


def test_history_stops_at_the_position_the_agents_counters_cover(conversation):
    history = selectors.message_history(agent=conversation, start_position=1, through=4)
    assert [message.position for message in history] == [1, 2, 4]


def test_pinned_messages(conversation):
    pinned = selectors.message_pinned(agent=conversation, through=conversation.message_count)
    assert [(message.position, message.token_count) for message in pinned] == [(3, 30)]
    assert selectors.message_pinned(agent=conversation, through=2) == []


@pytest.mark.parametrize(
    ("offset", "point"),
    [(0, HistoryPoint(1, 0)), (1, HistoryPoint(2, 10)), (30, HistoryPoint(4, 30)), (31, HistoryPoint(5, 70))],
)
def test_a_history_point_skips_pinned_messages(conversation, offset, point):
    assert selectors.message_history_point(agent=conversation, offset=offset, through=8) == point


def test_no_history_point_past_the_end(conversation):
    assert selectors.message_history_point(agent=conversation, offset=conversation.history_tokens, through=8) is None
    assert selectors.message_history_point(agent=conversation, offset=31, through=2) is None


def test_turns_start_at_user_messages(conversation):
    assert selectors.message_turn_start(agent=conversation, turns=1, through=8) == HistoryPoint(5, 70)
    assert selectors.message_turn_start(agent=conversation, turns=3, through=8) == HistoryPoint(3, 30)
    assert selectors.message_turn_start(agent=conversation, turns=6, through=8) is None
    assert selectors.message_turn_start(agent=conversation, turns=1, through=2) == HistoryPoint(2, 10)


def test_a_conversation_with_no_messages_is_assembled_without_reading_any(django_assert_num_queries):
    from agents.context.selectors.assembly import context_assemble

    agent = AgentFactory(model="gpt-4", strategy="sliding_window")

    with django_assert_num_queries(1):  # the agent's row, as it is now
        assembled = context_assemble(agent=agent, working_memory=["Goal: look around."])

    assert assembled.report.stored_messages == 0 and len(assembled.messages) == 1
    assert selectors.message_history(agent=agent, start_position=1, through=0) == []
    assert selectors.message_turn_start(agent=agent, turns=1, through=0) is None
