"""A memorize's LLM calls are bounded (one per step, at most MEMSITE_GRAPH_MEMORIZE_MAX_STEPS
steps), a user's graph operations queued are capped, and their calls are charged to them."""

import pytest
from django.urls import reverse

from agents.graphs import services
from agents.graphs.models import GraphOp, Turn
from agents.graphs.services.graphs import ASKER_GONE
from memsite.llm.models import LLMCall
from memsite.spaces.logic import key_digest
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import token_principal
from tests.factories import GraphFactory, acting, asker_gone, token_for
from tests.fake_openai import Reply
from tests.ledger import assert_every_call_has_a_principal
from tests.llm.factories import make_call
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db
# A step memorized: a subtask under the task (node 1) and the evidence for it.
EVIDENCE_PATCH = {
    "add_nodes": [
        {"tmp_id": "s", "kind": "subtask", "thought": [{"role": "assistant", "content": "I look up service 0."}]},
        {"tmp_id": "e", "kind": "evidence", "thought": [{"role": "tool", "content": "It listens on port 8000."}]},
    ],
    "add_edges": [{"src": "1", "dst": "s", "rationale": "decompose"}, {"src": "e", "dst": "s"}],
}


@pytest.fixture(autouse=True)
def quotas(settings, offline_llm, monkeypatch):
    settings.MEMSITE_QUOTA_GRAPH_OPS = 2
    settings.MEMSITE_GRAPH_MEMORIZE_MAX_STEPS = 3
    settings.MEMSITE_LLM_DAILY_CALLS = 2
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: None)
    return settings


def steps(count: int) -> list[dict]:
    return [
        message
        for number in range(count)
        for message in (
            {"role": "assistant", "content": f"I look up service {number}."},
            {"role": "tool", "content": f"Service {number} listens on port {8000 + number}."},
        )
    ]


def url(name: str, graph) -> str:
    return reverse(f"graphs-api:{name}", args=[graph.pk])


def test_a_memorize_of_more_steps_than_the_cap_is_413_and_stores_nothing(api, client, user):
    graph = GraphFactory()
    refused = api.post(url("graph-memorize", graph), {"messages": steps(4)}, format="json")
    assert refused.status_code == 413, refused.content
    body = refused.json()
    assert "hold 4 steps" in body["detail"] and "at most 3 (MEMSITE_GRAPH_MEMORIZE_MAX_STEPS)" in body["detail"]
    assert (body["steps"], body["max_steps"]) == (4, 3)
    assert_documented(refused, "/api/graphs/{graph_id}/memorize/", "post")
    client.force_login(user)
    page = client.post(
        reverse("agents:graph_memorize", args=[graph.pk]),
        {"messages_json": str(steps(4)).replace("'", '"')},
        HTTP_HX_REQUEST="true",
    )
    assert page.status_code == 413 and "MEMSITE_GRAPH_MEMORIZE_MAX_STEPS" in page.content.decode()
    assert not Turn.objects.filter(graph=graph).exists()
    assert not GraphOp.objects.filter(graph=graph, kind=GraphOp.Kind.MEMORIZE).exists()
    # A leading tool result is a step of its own, as the worker pairs turns.
    tool_first = [{"role": "tool", "content": "started"}, *steps(3)]
    assert api.post(url("graph-memorize", graph), {"messages": tool_first}, format="json").status_code == 413
    assert api.post(url("graph-memorize", graph), {"messages": steps(3)}, format="json").status_code == 202


def test_graph_operations_past_the_cap_are_429(api, user):
    graph = GraphFactory()
    assert api.post(url("graph-memorize", graph), {"messages": steps(1)}, format="json").status_code == 202
    assert api.post(url("graph-recall", graph)).status_code == 202
    for refused in (
        api.post(url("graph-memorize", graph), {"messages": steps(1)}, format="json"),
        api.post(url("graph-recall", graph)),
    ):
        assert refused.status_code == 429
        assert "2 graph operations in flight; the cap is 2 (MEMSITE_QUOTA_GRAPH_OPS)" in refused.json()["detail"]
    assert_documented(refused, "/api/graphs/{graph_id}/recall/", "post")
    assert GraphOp.objects.filter(graph=graph, created_by=user).count() == 2
    assert Turn.objects.filter(graph=graph).count() == 2


def test_a_memorize_is_charged_to_its_user_and_stops_asking_once_the_budget_is_spent(user, served_llm):
    graph = GraphFactory()
    served_llm.script(Reply.json(EVIDENCE_PATCH))  # a model memorizes the first step
    op = services.graph_memorize(graph=graph, messages=steps(3), by=acting(user))
    make_call(by=acting(user))  # one call of the day is spent elsewhere
    services.graph_work(graph_id=graph.pk)
    op.refresh_from_db()
    calls = LLMCall.objects.filter(user=user, purpose="memorize")
    assert calls.count() == 1  # then the budget (2 calls) is spent
    assert op.status == GraphOp.Status.REJECTED and op.rationale == "1 of 3 steps memorized"
    assert "The daily LLM budget is spent: 2 of 2 LLM calls" in op.error
    assert_every_call_has_a_principal()


@pytest.mark.parametrize("how", ["removed", "deleted", "reader", "revoked"])
def test_an_operation_whose_asker_can_no_longer_act_fails_and_calls_nothing(user, how):
    graph = GraphFactory()
    by = token_principal(ApiToken.objects.get(digest=key_digest(token_for(user)))) if how == "revoked" else acting(user)
    op = services.graph_recall(graph=graph, by=by)
    asker_gone(user, how)

    services.graph_work(graph_id=graph.pk)

    op.refresh_from_db()
    assert op.status == GraphOp.Status.FAILED and op.error == ASKER_GONE
    assert not LLMCall.objects.exists()  # never run as anyone else
