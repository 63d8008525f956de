"""A page of graph operations or brain ticks reads its rows' providers from the ledger in one
query, whatever the number of rows; a single row still reads its own."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.brains.models import TickRun
from agents.brains.services.brains import brain_create
from agents.graphs.models import GraphOp
from tests.factories import AgentFactory, GraphFactory
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db
PROVIDERS = ["openai", "offline", None]  # the last row has no answered call on record


def served(row, index: int) -> None:
    provider = PROVIDERS[index % len(PROVIDERS)]
    if provider is not None:
        make_call(served=row, provider=provider, model=provider)


def queries_for(api, path: str) -> tuple[list[str], list]:
    with CaptureQueriesContext(connection) as queries:
        response = api.get(path, {"page_size": 500})
    assert response.status_code == 200
    return [query["sql"] for query in queries], response.json()["results"]


def assert_constant_cost(api, path: str, add_rows) -> None:
    """The page's queries stay the same from 3 rows to 30, and each row says its provider."""
    add_rows(range(3))
    api.get(path)  # the token's first use is noted (at most once a minute): not measured here
    few, _ = queries_for(api, path)
    add_rows(range(3, 30))
    many, results = queries_for(api, path)
    assert len(many) == len(few) and len(results) >= 30
    assert len([sql for sql in many if "llm_llmcall" in sql]) == 1


def test_a_page_of_graph_operations_reads_the_ledger_once(api):
    graph = GraphFactory()
    ops: list[GraphOp] = []

    def add_ops(numbers):
        for number in numbers:
            ops.append(GraphOp.objects.create(graph=graph, kind="recall"))
            served(ops[-1], number)

    assert_constant_cost(api, reverse("graphs-api:graph-ops", args=[graph.pk]), add_ops)
    _, results = queries_for(api, reverse("graphs-api:graph-ops", args=[graph.pk]))
    by_id = {op["id"]: op["provider"] for op in results}
    assert [by_id[op.pk] for op in ops[:3]] == PROVIDERS


def test_a_page_of_ticks_reads_the_ledger_once(api):
    agent = AgentFactory()
    brain_create(agent=agent)

    def add_ticks(numbers):
        for number in numbers:
            run = TickRun.objects.create(brain_id=agent.pk, number=number + 1, status="done", ended_at=timezone.now())
            served(run, number)

    path = reverse("agents-api:brain-ticks", args=[agent.pk])
    assert_constant_cost(api, path, add_ticks)
    _, results = queries_for(api, path)
    assert [tick["provider"] for tick in sorted(results, key=lambda tick: tick["number"])[:3]] == PROVIDERS
