"""What the offline heuristics wrote is marked as such on the dashboard: a search's result, a
graph's operations, a brain's last tick; and the ledger read that tells (`llm_providers_serving`)."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.brains.models import TickRun
from agents.brains.services.brains import brain_create
from agents.graphs.models import GraphOp
from memory.models import Search
from memsite.llm.selectors import llm_provider_serving, llm_providers_serving
from tests.factories import AgentFactory, GraphFactory, SearchFactory
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db
BADGE = 'class="badge badge-heuristic"'
RESULT = {
    "answers": [{"question": "Where?", "answer": "In deploy.md", "node_ids": [], "complete": True}],
    "nodes": [],
    "open_questions": [],
    "ended_because": "answered",
}


def test_a_row_is_offline_when_any_answered_call_ran_offline():
    mixed, model, failed, silent = (SearchFactory() for _ in range(4))
    make_call(served=mixed, provider="openai")
    make_call(served=mixed, provider="offline", model="offline")
    make_call(served=model, provider="openai")
    make_call(served=failed, provider="offline", ok=False)  # wrote nothing

    ids = [mixed.pk, model.pk, failed.pk, silent.pk]
    assert llm_providers_serving(model=Search, served_ids=ids) == {mixed.pk: "offline", model.pk: "openai"}
    assert llm_provider_serving(model=Search, served_id=silent.pk) is None
    # Another model's row of the same id is another row.
    assert llm_provider_serving(model=TickRun, served_id=mixed.pk) is None


@pytest.mark.parametrize(("provider", "marked"), [("offline", True), ("openai", False)])
def test_a_search_result_is_marked_when_heuristics_wrote_it(user_client, provider, marked):
    search = SearchFactory(status=Search.Status.DONE, ended_because="answered", result=RESULT)
    make_call(served=search, provider=provider)

    html = user_client.get(reverse("memory:search_detail", args=[search.pk])).content.decode()

    result = re.search(r'<section class="result" id="result">.*?</h2>', html, re.DOTALL).group(0)
    assert (BADGE in result) is marked and "In deploy.md" in html


@pytest.mark.parametrize(("provider", "marked"), [("offline", True), ("openai", False)])
def test_graph_operations_are_marked_when_heuristics_ran_them(user_client, provider, marked):
    graph = GraphFactory()
    op = GraphOp.objects.filter(graph=graph).first() or GraphOp.objects.create(graph=graph, kind="recall")
    make_call(served=op, provider=provider)

    html = user_client.get(reverse("agents:graph_detail", args=[graph.pk])).content.decode()

    row = re.search(rf'<tr class="op [^"]*" id="op-{op.pk}">.*?</tr>', html, re.DOTALL).group(0)
    assert (BADGE in row) is marked


@pytest.mark.parametrize(("provider", "marked"), [("offline", True), ("openai", False)])
def test_the_last_tick_is_marked_when_heuristics_ran_it(user_client, provider, marked):
    agent = AgentFactory()
    brain_create(agent=agent)
    run = TickRun.objects.create(brain_id=agent.pk, number=1, status="done", ended_at=timezone.now())
    make_call(served=run, provider=provider)

    html = user_client.get(reverse("agents:brain_detail", args=[agent.pk])).content.decode()

    status = re.search(r'<p class="tick-status" id="tick-status">.*?</p>', html, re.DOTALL).group(0)
    assert (BADGE in status) is marked and "tick 1 done" in status
