"""The demo agent of `make run`."""

import pytest

from agents.brains.models import Brain
from agents.context.models import Agent, Message
from agents.demo import DEMO_AGENT, demo_agent_seed
from agents.graphs.models import Graph, GraphOp
from memsite.spaces.models import Space
from tests.factories import AgentFactory, default_space


@pytest.mark.django_db
def test_the_demo_agent_has_a_conversation_a_ticking_brain_and_a_graph_once(offline_llm, monkeypatch):
    queued = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: queued.append(kwargs))

    agent = demo_agent_seed()

    assert agent.name == DEMO_AGENT and Message.objects.filter(agent=agent).count() == 2
    brain = Brain.objects.get(agent=agent)
    assert brain.ticking and brain.goals.count() == 1
    graph = Graph.objects.get(agent=agent)
    assert GraphOp.objects.filter(graph=graph, kind="memorize", status="queued").count() == 1
    assert demo_agent_seed() is None and Agent.objects.count() == 1


@pytest.mark.django_db
def test_the_demo_agent_is_made_in_the_default_space_whatever_another_space_holds(offline_llm, monkeypatch):
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: None)
    AgentFactory(space=Space.objects.create(slug="other", name="Other"), name=DEMO_AGENT)

    agent = demo_agent_seed()

    assert agent is not None and agent.space == default_space()
    assert Graph.objects.get(agent=agent).space == default_space()
