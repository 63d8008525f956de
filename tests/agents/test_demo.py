"""The demo agent of `make run`: the demo user's, not ticking until someone presses Start, and
`seed_demo_agents` says where to press it."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from agents.brains.models import Brain
from agents.brains.selectors.ticks import brain_goals_active
from agents.context.models import Agent, Message
from agents.demo import DEMO_AGENT, GOALS, demo_agent_seed
from agents.graphs.models import Graph, GraphOp
from memsite.demo import DEMO_USERNAME, demo_principal
from memsite.spaces.models import Space
from tests.factories import AgentFactory, StaffFactory, acting, default_space


@pytest.fixture
def demo(db):
    return StaffFactory(username=DEMO_USERNAME)


@pytest.fixture
def queued(monkeypatch) -> list[dict]:
    graph_work: list[dict] = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: graph_work.append(kwargs))
    return graph_work


def test_the_demo_agent_has_a_conversation_a_brain_at_rest_and_a_graph_once(offline_llm, demo, queued):
    agent, made = demo_agent_seed(by=acting(demo))

    assert made and agent.name == DEMO_AGENT and Message.objects.filter(agent=agent).count() == 2
    brain = Brain.objects.get(agent=agent)
    assert not brain.ticking and brain.ticking_by is None
    assert [goal.text for goal in brain_goals_active(brain=brain)] == GOALS  # the first is its primary goal
    graph = Graph.objects.get(agent=agent)
    [op] = GraphOp.objects.filter(graph=graph, kind="memorize", status="queued")
    assert op.created_by == demo  # the demo user's work, on their budget
    assert demo_agent_seed(by=acting(demo)) == (agent, False) and Agent.objects.count() == 1


def test_the_demo_agent_is_made_in_the_default_space_whatever_another_space_holds(offline_llm, demo, queued):
    AgentFactory(space=Space.objects.create(slug="other", name="Other"), name=DEMO_AGENT)

    agent, _ = demo_agent_seed(by=acting(demo))

    assert agent.space == default_space() and Graph.objects.get(agent=agent).space == default_space()


def test_pressing_start_ticks_the_demo_agent_for_whoever_pressed_it(offline_llm, demo, queued, client):
    agent, _ = demo_agent_seed(by=acting(demo))
    client.force_login(demo)

    pressed = client.post(reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": 30})

    assert pressed.status_code == 302  # back to the page, which says it ticks
    brain = Brain.objects.get(agent=agent)
    assert brain.ticking and brain.ticking_by == demo and brain.ticking_token is None  # on the demo user's budget


def test_the_command_says_where_to_start_the_demo_agent(offline_llm, demo, queued, settings):
    settings.DEBUG = True
    out = io.StringIO()

    call_command("seed_demo_agents", "--url", "http://127.0.0.1:8100/", stdout=out)
    call_command("seed_demo_agents", "--url", "http://127.0.0.1:8100/", stdout=out)

    agent = Agent.objects.get(name=DEMO_AGENT)
    page = f"http://127.0.0.1:8100{reverse('agents:brain_detail', args=[agent.pk])}"
    said = out.getvalue().splitlines()
    assert said == [
        f"Demo agent '{DEMO_AGENT}' added.",
        f"Start the demo agent {DEMO_AGENT} on its page: {page}",
        f"Demo agent '{DEMO_AGENT}' is already there.",
        f"Start the demo agent {DEMO_AGENT} on its page: {page}",
    ]
    assert not Brain.objects.get(agent=agent).ticking


def test_the_command_needs_the_demo_user(db, settings):
    settings.DEBUG = True
    with pytest.raises(CommandError, match="run seed_demo first"):
        call_command("seed_demo_agents")
    with pytest.raises(CommandError, match="run seed_demo first"):
        demo_principal(space=default_space())
