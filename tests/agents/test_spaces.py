"""Each space keeps its own agents, brains and graphs: an id of another space's is the same 404
as a missing one and changes nothing, lists show the space's own rows, names are unique within
a space only, and ticking in one space leaves the other's brains as they were."""

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from agents.brains import services as brain_services
from agents.brains.models import Brain
from agents.brains.services.brains import goal_create
from agents.context import selectors as context_selectors
from agents.context import services as context_services
from agents.context.models import Agent
from agents.graphs import selectors as graph_selectors
from agents.graphs import services as graph_services
from agents.graphs.models import Graph
from memsite.errors import NotFound
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set, token_create
from tests.factories import AgentFactory, GraphFactory, a_member, default_space
from tests.security.test_authorization import fingerprint, rolled_back

pytestmark = pytest.mark.django_db

STEP = [{"role": "assistant", "content": "I list /references."}, {"role": "tool", "content": "Two notes."}]


@pytest.fixture
def other() -> Space:
    return Space.objects.create(slug="other", name="Other")


@pytest.fixture
def outsider(other):
    """An editor of the other space only."""
    person = get_user_model().objects.create_user(username="outsider", password="password")
    membership_set(space=other, member=person, role=Role.EDITOR)
    return person


@pytest.fixture
def other_api(other, outsider) -> APIClient:
    client = APIClient()
    key = token_create(member=outsider, space=other, name="test token", role=None).key
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    client.get(reverse("agents-api:agent-detail", args=[0]))  # the token's first use is noted
    return client


@pytest.fixture
def other_page(client: Client, outsider) -> Client:
    client.force_login(outsider)
    return client


@pytest.fixture
def ours(offline_llm) -> dict:
    """The default space's agent with a message, a checkpoint, a goal and a brain that ticks,
    and a graph of it."""
    agent = AgentFactory(name="scout", model="gpt-4")
    context_services.message_append(agent=agent, role="user", content="Where are the notes?")
    checkpoint = context_services.checkpoint_create(agent=agent)
    goal = goal_create(agent=agent, text="Find the notes")
    brain_services.ticking_start(agent=agent, interval_s=60, by=a_member())
    graph = GraphFactory(agent=agent, task="Find the notes")
    return {"agent": agent, "checkpoint": checkpoint, "goal": goal, "graph": graph}


def _agent_calls(ours: dict) -> list[tuple[str, str, tuple, object]]:
    agent, checkpoint, goal = ours["agent"].pk, ours["checkpoint"].pk, ours["goal"].pk
    return [
        ("get", "agent-detail", (agent,), None),
        ("patch", "agent-detail", (agent,), {"name": "renamed"}),
        ("post", "messages", (agent,), {"role": "user", "content": "hello"}),
        ("get", "agent-context", (agent,), None),
        ("post", "checkpoint-create", (agent,), None),
        ("post", "checkpoint-restore", (agent, checkpoint), None),
        ("get", "brain", (agent,), None),
        ("get", "brain-thoughts", (agent,), None),
        ("post", "tick", (agent,), None),
        ("post", "ticking-start", (agent,), {"interval_s": 60}),
        ("post", "ticking-pause", (agent,), None),
        ("post", "chat", (agent,), {"text": "hello"}),
        ("post", "goal-create", (agent,), {"text": "Leave"}),
        ("post", "goal-complete", (agent, goal), None),
        ("get", "memory-json", (agent,), None),
        ("put", "memory-json", (agent,), {}),
    ]


def _graph_calls(ours: dict) -> list[tuple[str, str, tuple, object]]:
    graph = ours["graph"].pk
    return [
        ("get", "graph-detail", (graph,), None),
        ("post", "graph-memorize", (graph,), {"messages": STEP}),
        ("post", "graph-recall", (graph,), None),
        ("get", "graph-context", (graph,), None),
        ("get", "graph-nodes", (graph,), None),
        ("get", "graph-node", (graph, 1), None),
        ("get", "graph-leaves", (graph,), None),
        ("get", "graph-ops", (graph,), None),
        ("get", "graph-snapshot", (graph,), None),
        ("put", "graph-snapshot", (graph,), {}),
    ]


def _call(client: APIClient, method: str, url: str, body: object):
    return getattr(client, method)(url, body, format="json") if body is not None else getattr(client, method)(url)


def _refused_as_missing(client: APIClient, method: str, url: str, body: object, remove: Callable[[], object]) -> None:
    """The call is a 404 that changes nothing, answered as when the row it names is gone."""
    before = fingerprint()
    response = _call(client, method, url, body)
    assert response.status_code == 404, response.content
    assert fingerprint() == before
    with rolled_back(client):
        remove()
        missing = _call(client, method, url, body)
    assert missing.status_code == 404 and response.json() == missing.json()


def test_another_spaces_agent_is_a_404_on_every_agent_and_brain_call(ours, other_api):
    for method, name, args, body in _agent_calls(ours):
        url = reverse(f"agents-api:{name}", args=args)
        _refused_as_missing(other_api, method, url, body, Agent.objects.filter(pk=ours["agent"].pk).delete)


def test_another_spaces_graph_is_a_404_on_every_graph_call(ours, other_api):
    for method, name, args, body in _graph_calls(ours):
        url = reverse(f"graphs-api:{name}", args=args)
        _refused_as_missing(other_api, method, url, body, Graph.objects.filter(pk=ours["graph"].pk).delete)


def test_a_graph_is_not_made_for_another_spaces_agent(ours, other_api):
    body = {"task": "Find the notes", "agent": ours["agent"].pk}
    url = reverse("graphs-api:graph-create")
    _refused_as_missing(other_api, "post", url, body, Agent.objects.filter(pk=ours["agent"].pk).delete)


def test_the_graph_service_refuses_an_agent_of_another_space_as_a_missing_one(other, offline_llm):
    theirs = AgentFactory(space=other)

    with pytest.raises(NotFound) as refused:
        graph_services.graph_create(space=default_space(), task="Map", agent=theirs)
    with pytest.raises(NotFound) as missing:
        context_selectors.agent_get(space=default_space(), agent_id=theirs.pk)

    assert refused.value.message == missing.value.message and not Graph.objects.exists()


def test_a_graph_is_made_in_the_callers_space_with_its_agent(ours, other, other_api):
    theirs = AgentFactory(space=other, name="scout", model="gpt-4")

    response = other_api.post(reverse("graphs-api:graph-create"), {"task": "Map", "agent": theirs.pk}, format="json")

    assert response.status_code == 201
    graph = Graph.objects.get(pk=response.json()["id"])
    assert (graph.space, graph.agent) == (other, theirs)


def test_the_same_agent_name_is_free_in_another_space_and_taken_within_it(ours, other, other_api):
    create = reverse("agents-api:agent-create")

    made = other_api.post(create, {"name": "scout", "model": "gpt-4"}, format="json")
    again = other_api.post(create, {"name": "scout", "model": "gpt-4"}, format="json")
    second = other_api.post(create, {"name": "builder", "model": "gpt-4"}, format="json")
    rename = other_api.patch(reverse("agents-api:agent-detail", args=[second.json()["id"]]), {"name": "scout"})

    assert (made.status_code, again.status_code, rename.status_code) == (201, 409, 409)
    assert Agent.objects.get(pk=made.json()["id"]).space == other
    assert sorted(Agent.objects.filter(name="scout").values_list("space__slug", flat=True)) == ["default", "other"]


def test_lists_hold_only_the_spaces_own_agents_and_graphs(ours, other):
    theirs = AgentFactory(space=other, name="builder")
    their_graph = GraphFactory(space=other, agent=theirs)

    assert list(context_selectors.agent_list(space=other)) == [theirs]
    assert list(context_selectors.agent_list(space=default_space())) == [ours["agent"]]
    assert list(graph_selectors.graph_list(space=other)) == [their_graph]
    assert list(graph_selectors.graph_list(space=other, agent_id=ours["agent"].pk)) == []
    assert list(graph_selectors.graph_list(space=default_space())) == [ours["graph"]]


def test_pages_show_the_spaces_own_rows_and_404_for_anothers(ours, other, other_page):
    theirs = AgentFactory(space=other, name="builder")
    GraphFactory(space=other, agent=theirs, task="Map the builder's notes")

    agents_page = other_page.get(reverse("agents:agent_list")).content.decode()
    graphs_page = other_page.get(reverse("agents:graph_list")).content.decode()

    assert "builder" in agents_page and "scout" not in agents_page
    assert "Map the builder" in graphs_page and "Find the notes" not in graphs_page
    agent, graph = ours["agent"].pk, ours["graph"].pk
    for name, args in (("agent_detail", agent), ("brain_detail", agent), ("graph_detail", graph)):
        assert other_page.get(reverse(f"agents:{name}", args=[args])).status_code == 404


def test_a_graph_page_form_offers_only_the_spaces_agents(ours, other_page):
    before = fingerprint()

    response = other_page.post(reverse("agents:graph_create"), {"task": "Map", "agent": ours["agent"].pk})

    assert response.status_code == 400 and fingerprint() == before


def test_ticking_in_one_space_leaves_the_others_brains_as_they_were(ours, other, other_api):
    theirs = AgentFactory(space=other, name="scout", model="gpt-4")
    start, pause = (reverse(f"agents-api:ticking-{verb}", args=[theirs.pk]) for verb in ("start", "pause"))
    before = Brain.objects.filter(pk=ours["agent"].pk).values().get()

    assert other_api.post(start, {"interval_s": 60}, format="json").status_code == 200
    assert Brain.objects.get(pk=theirs.pk).ticking
    assert other_api.post(pause).status_code == 200

    assert not Brain.objects.get(pk=theirs.pk).ticking
    assert Brain.objects.filter(pk=ours["agent"].pk).values().get() == before


def test_beat_queues_the_due_brains_of_every_space(ours, other, monkeypatch, django_capture_on_commit_callbacks):
    queued: list[int] = []
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda agent_id: queued.append(agent_id))
    theirs = AgentFactory(space=other, name="scout", model="gpt-4")
    brain_services.ticking_start(agent=theirs, interval_s=60, by=a_member(other))

    with django_capture_on_commit_callbacks(execute=True):
        assert brain_services.ticks_start_due() == 2

    assert sorted(queued) == sorted([ours["agent"].pk, theirs.pk])
