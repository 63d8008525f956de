"""Chat with an agent: goals by `goal: ...`, replies through the LLM, the user model, and a
failed call that keeps the user's line. Both lines are messages of the agent's conversation."""

import pytest

from agents.brains import services
from agents.brains.models import Brain, Goal, Record
from agents.brains.services import chat as chat_service
from agents.brains.services.brains import brain_writing, goal_complete, goal_create
from agents.context.logic.assembly import WORKING_HEADING
from agents.context.models import Message
from agents.context.services import message_append
from memsite.errors import InvalidInput
from memsite.llm.models import LLMCall
from tests.factories import system
from tests.fake_openai import Reply

pytestmark = pytest.mark.django_db


def chat(agent) -> list[tuple[str, str]]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list("role", "content"))


def test_goal_adds_a_goal_and_confirms_without_an_llm_call(agent):
    exchange = services.chat_send(agent=agent, text="Goal:  map the projects folder ", by=system())

    goal = Goal.objects.get(brain_id=agent.pk)
    assert goal.text == "map the projects folder" and goal.status == Goal.Status.ACTIVE
    assert exchange.goal == goal and exchange.reply_message.content == "Goal added: map the projects folder"
    assert chat(agent) == [
        ("user", "Goal:  map the projects folder"),
        ("assistant", "Goal added: map the projects folder"),
    ]
    assert not LLMCall.objects.exists()


def test_a_goal_past_the_cap_is_answered_not_raised(agent, settings):
    settings.MEMSITE_BRAIN_CAPS = {"goal": 1}
    goal_create(agent=agent, text="the only goal")

    exchange = services.chat_send(agent=agent, text="goal: another", by=system())

    assert exchange.goal is None
    assert exchange.reply_message.content.startswith("I could not add that goal: The agent has 1")
    assert Goal.objects.filter(brain_id=agent.pk).count() == 1


def test_goals_can_be_completed(agent):
    exchange = services.chat_send(agent=agent, text="goal: read the notes", by=system())

    done = goal_complete(agent=agent, goal_id=exchange.goal.pk)

    assert done.status == Goal.Status.DONE and done.done_at is not None


def test_a_message_gets_a_reply_and_both_join_the_history(agent, llm):
    with brain_writing(agent=agent) as write:
        write.set(self_summary="I map memsite's memory tree.")
    goal_create(agent=agent, text="Map the projects")
    llm.script(Reply.json({"reply": "Hello! I map the tree."}), Reply.json({"reply": "Three folders so far."}))
    services.chat_send(agent=agent, text="Hello, who are you?", by=system())

    exchange = services.chat_send(agent=agent, text="What have you found?", by=system())

    assert exchange.reply_message.content == "Three folders so far." and exchange.goal is None
    assert chat(agent) == [
        ("user", "Hello, who are you?"),
        ("assistant", "Hello! I map the tree."),
        ("user", "What have you found?"),
        ("assistant", "Three folders so far."),
    ]
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.last_user_message == "What have you found?"
    messages = llm.requests[1].messages
    [working] = [message["content"] for message in messages if message["content"].startswith(WORKING_HEADING)]
    assert '"I map memsite\'s memory tree."' in working and '"Map the projects"' in working
    # The rest is the conversation, as the agent's context assembles it.
    assert [(message["role"], message["content"]) for message in messages if message["role"] != "system"] == [
        ("user", "Hello, who are you?"),
        ("assistant", "Hello! I map the tree."),
        ("user", "What have you found?"),
    ]
    call = LLMCall.objects.order_by("id").last()
    assert call.purpose == "chat" and call.served == exchange.user_message


def test_the_user_model_keeps_the_last_ten_messages(agent):
    for number in range(1, 13):
        services.chat_send(agent=agent, text=f"message {number}", by=system())

    kept = Record.objects.filter(brain_id=agent.pk, kind="user_message").order_by("seq")
    assert [record.text for record in kept] == [f"message {number}" for number in range(3, 13)]
    assert Message.objects.filter(agent=agent).count() == 24


def test_a_failed_llm_call_keeps_the_users_line(agent, llm):
    llm.script(Reply.failure(500, "The model is down."))

    with pytest.raises(services.ChatFailed) as failed:
        services.chat_send(agent=agent, text="Are you there?", by=system())

    assert failed.value.status == 502 and "LLM call failed" in failed.value.message
    assert failed.value.data["reason"] == "server_error"
    assert chat(agent) == [("user", "Are you there?")]
    assert Brain.objects.get(pk=agent.pk).last_user_message == "Are you there?"


@pytest.mark.parametrize("text", ["", "   ", "goal:", "goal:   ", None, "x" * 4_001, "goal: " + "g" * 501])
def test_empty_or_oversized_messages_are_refused_before_anything_is_written(agent, text):
    with pytest.raises(InvalidInput):
        services.chat_send(agent=agent, text=text, by=system())

    assert chat(agent) == []


def test_a_message_appended_while_the_reply_is_made_is_not_in_its_prompt(agent, llm, monkeypatch):
    remembered = chat_service._remembered

    def meanwhile(*args, **kwargs):
        message_append(agent=agent, role="user", content="Said meanwhile.")
        return remembered(*args, **kwargs)

    monkeypatch.setattr(chat_service, "_remembered", meanwhile)
    llm.script(Reply.json({"reply": "Hi."}))

    services.chat_send(agent=agent, text="Hello?", by=system())

    assert llm.requests[0].messages[-1] == {"role": "user", "content": "Hello?"}
    assert chat(agent) == [("user", "Hello?"), ("user", "Said meanwhile."), ("assistant", "Hi.")]
