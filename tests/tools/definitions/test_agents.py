"""The tools of agents, their reasoning graphs and brains: each answers as the REST operation it
stands for (compared with the API's answer for the same rows), names agents by id or name, and
finds nothing of another space."""

import json
from contextlib import ExitStack

import pytest
from rest_framework.test import APIClient

from agents.brains.models import Goal
from agents.context import services as context_services
from agents.context.models import Message
from agents.graphs.models import GraphOp, Turn
from memsite.errors import Forbidden, NotFound
from memsite.limits import Busy, wait_slots
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from tests.factories import AgentFactory, GraphFactory, token_for
from tests.security.test_authorization import fingerprint
from tests.tools.conftest import principal

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent():
    agent = AgentFactory(name="scout", model="gpt-4", instructions="Help the swarm.")
    for role, content in [("user", "Where is the deploy script?"), ("assistant", "In /ops/deploy.sh.")]:
        context_services.message_append(agent=agent, role=role, content=content)
    return agent


@pytest.fixture
def rest(editor) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    return client


def plain(result: dict) -> dict:
    return json.loads(json.dumps(result))


# -- context_assemble ----------------------------------------------------------------------------


def test_context_assemble_by_id_or_name_answers_as_the_api(call, rest, agent):
    by_id = call("context_assemble", agent=agent.pk)
    by_name = call("context_assemble", agent="scout")

    assert plain(by_id) == plain(by_name) == rest.get(f"/api/agents/{agent.pk}/context/").json()
    assert [message["content"] for message in by_id["messages"]] == [
        "Help the swarm.",
        "Where is the deploy script?",
        "In /ops/deploy.sh.",
    ]


def test_context_assemble_takes_a_strategy_and_turns(call, rest, agent):
    result = call("context_assemble", agent="scout", strategy="sliding_window", turns=1)

    api = rest.get(f"/api/agents/{agent.pk}/context/?strategy=sliding_window&turns=1").json()
    assert plain(result) == api and result["report"]["strategy"] == "sliding_window"


# -- brains --------------------------------------------------------------------------------------


def test_brain_chat_answers_with_the_exchange(call, agent, editor):
    result = call("brain_chat", agent="scout", text="What have you read?")

    assert result["user"]["content"] == "What have you read?" and result["reply"]["content"]
    assert result["reply"]["position"] == result["user"]["position"] + 1 and result["goal"] is None
    said = list(Message.objects.filter(agent=agent).order_by("position").values_list("content", flat=True))
    assert said[-2:] == ["What have you read?", result["reply"]["content"]]


def test_brain_chat_sets_a_goal_and_the_state_shows_it(call, rest, agent):
    call("brain_chat", agent=agent.pk, text="goal: map the notes")
    state = call("brain_state", agent="scout")

    assert Goal.objects.get(brain_id=agent.pk).text == "map the notes"
    assert [goal["text"] for goal in state["goals"]] == ["map the notes"]
    assert plain(state) == rest.get(f"/api/agents/{agent.pk}/brain/").json()


def test_brain_chat_without_a_slot_to_wait_in_is_a_429_that_writes_nothing(call, agent):
    with ExitStack() as stack:
        slots = wait_slots()
        for _ in range(slots.size):
            stack.enter_context(slots.hold())
        with pytest.raises(Busy):
            call("brain_chat", agent="scout", text="Hello?")

    assert not Message.objects.filter(agent=agent, content="Hello?").exists()


# -- reasoning graphs ----------------------------------------------------------------------------


def test_graph_memorize_stores_the_turns_and_queues_the_work(call, agent):
    graph = GraphFactory(agent=agent)
    turns = [{"role": "assistant", "content": "I look up the port."}, {"role": "tool", "content": "It is 8080."}]

    result = call("graph_memorize", graph=graph.pk, messages=turns)

    op = GraphOp.objects.get(pk=result["id"])
    assert (result["kind"], result["status"], result["graph"]) == ("memorize", "queued", graph.pk)
    assert op.kind == "memorize" and result["data"]["turn_ids"] == [0, 1]
    assert list(Turn.objects.filter(graph=graph).values_list("role", "content")) == [
        ("assistant", "I look up the port."),
        ("tool", "It is 8080."),
    ]


def test_graph_recall_queues_a_recall_and_graph_context_rebuilds_the_messages(call, rest):
    graph = GraphFactory()
    call("graph_memorize", graph=graph.pk, messages=[{"role": "assistant", "content": "I look."}])

    recall = call("graph_recall", graph=graph.pk)
    context = call("graph_context", graph=graph.pk)

    assert (recall["kind"], recall["status"]) == ("recall", "queued")
    assert [message["content"] for message in context["messages"]] == ["I look."]
    assert plain(context) == rest.get(f"/api/graphs/{graph.pk}/context/").json()


# -- roles and spaces ----------------------------------------------------------------------------


def test_a_reader_reads_agents_and_graphs_and_is_refused_the_rest(call, agent):
    graph = GraphFactory()
    reader = principal(Role.READER)
    before = fingerprint()

    assert call("brain_state", as_=reader, agent="scout")["agent"] == agent.pk
    assert call("graph_context", as_=reader, graph=graph.pk)["messages"] == []
    for tool, arguments in [
        ("brain_chat", {"agent": "scout", "text": "Hi."}),
        ("graph_recall", {"graph": graph.pk}),
        ("graph_memorize", {"graph": graph.pk, "messages": [{"role": "tool", "content": "x"}]}),
    ]:
        with pytest.raises(Forbidden):
            call(tool, as_=reader, **arguments)
    assert fingerprint() == before


def test_another_space_s_agents_and_graphs_are_not_found(call, agent):
    graph = GraphFactory(agent=agent)
    outsider = principal(Role.OWNER, space=Space.objects.create(slug="other", name="Other"))
    before = fingerprint()

    for tool, arguments, message in [
        ("context_assemble", {"agent": agent.pk}, f"No agent with id {agent.pk}."),
        ("context_assemble", {"agent": "scout"}, "No agent named 'scout'."),
        ("brain_state", {"agent": "scout"}, "No agent named 'scout'."),
        ("brain_chat", {"agent": agent.pk, "text": "Hi."}, f"No agent with id {agent.pk}."),
        ("graph_context", {"graph": graph.pk}, f"No graph {graph.pk}."),
        ("graph_recall", {"graph": graph.pk}, f"No graph {graph.pk}."),
    ]:
        with pytest.raises(NotFound) as refused:
            call(tool, as_=outsider, **arguments)
        assert refused.value.message == message, tool
    assert fingerprint() == before
