"""Each ledger row says what its call served (a search, a tick, a chat line, a graph operation,
a summary) and links to that object's dashboard page; the page reads them in one query a kind."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agents.brains.models import Brain, TickRun
from agents.context.models import Summary
from agents.context.services import message_append
from agents.graphs.models import GraphOp
from tests.factories import AgentFactory, GraphFactory, SearchFactory
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def served(db) -> dict[str, tuple[object, str]]:
    """One object of each kind a call serves, with its page."""
    agent = AgentFactory()
    brain, _ = Brain.objects.get_or_create(agent=agent)
    graph = GraphFactory()
    search = SearchFactory()
    return {
        "search": (search, reverse("memory:search_detail", args=[search.pk])),
        "tick": (TickRun.objects.create(brain=brain, number=1), reverse("agents:brain_detail", args=[agent.pk])),
        "chat line": (
            message_append(agent=agent, role="user", content="hi"),
            reverse("agents:brain_detail", args=[agent.pk]),
        ),
        "graph operation": (
            GraphOp.objects.create(graph=graph, kind=GraphOp.Kind.RECALL),
            reverse("agents:graph_detail", args=[graph.pk]),
        ),
        "summary": (Summary.objects.create(agent=agent, through=3), reverse("agents:agent_detail", args=[agent.pk])),
    }


def test_each_row_links_what_it_served(logged_in, served):
    for obj, _ in served.values():
        make_call(served=obj)
    make_call()  # the system's own work: serves nothing
    html = logged_in.get(reverse("llm:ledger")).content.decode()
    for label, (obj, url) in served.items():
        assert f'<a href="{url}">{label} #{obj.pk}</a>' in html, label
    assert re.search(r'llm-served">\s*<span class="muted">—</span>\s*</td>', html)


def test_the_call_page_links_what_it_served(logged_in, served):
    search, url = served["search"]
    call = make_call(served=search)
    html = logged_in.get(reverse("llm:call", args=[call.pk])).content.decode()
    assert f'<a href="{url}">search #{search.pk}</a>' in html


def test_an_object_that_is_gone_is_named_without_a_link(logged_in, served):
    search, url = served["search"]
    make_call(served=search)
    search_id = search.pk
    search.delete()
    html = logged_in.get(reverse("llm:ledger")).content.decode()
    assert f'<span class="muted">search #{search_id}</span>' in html and url not in html


def queries_of_the_ledger(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("llm:ledger")).status_code == 200
    return len(queries)


def test_the_ledger_reads_the_served_pages_in_one_query_a_kind(logged_in, served):
    for obj, _url in served.values():
        make_call(served=obj)
    logged_in.get(reverse("llm:ledger"))  # the content types are cached from here on
    few = queries_of_the_ledger(logged_in)
    for _ in range(10):
        for obj, _url in served.values():
            make_call(served=obj)
    assert queries_of_the_ledger(logged_in) == few
