import pytest
from django.urls import reverse

from agents.graphs import services as graph_services
from agents.graphs.models import Graph, GraphOp
from tests.factories import default_space

pytestmark = pytest.mark.django_db


def graph_with_history(task: str) -> Graph:
    graph = graph_services.graph_create(
        space=default_space(), task=task, model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    graph_services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {
                    "node_id": 1,
                    "kind": "task",
                    "thought": task,
                    "related_turn_ids": [],
                    "active": True,
                },
                "2": {
                    "node_id": 2,
                    "kind": "subtask",
                    "thought": [{"role": "assistant", "content": "look <b>up</b>"}],
                    "related_turn_ids": [],
                    "active": "Flushed",
                },
            },
            "edges": [{"src": 1, "dst": 2, "rationale": "decompose task"}],
        },
    )
    return graph


def test_graphs_are_listed_and_read_with_their_nodes_and_edges(admin_client, django_assert_max_num_queries):
    graph = graph_with_history("Find the port")
    for number in range(5):
        graph_with_history(f"Find port {number}")

    with django_assert_max_num_queries(12):
        html = admin_client.get(reverse("admin:graphs_graph_changelist")).content.decode()
    assert "Find the port" in html and '<td class="field-node_count">2</td>' in html
    assert '<td class="field-op_count">2</td>' in html  # create, import

    response = admin_client.get(reverse("admin:graphs_graph_change", args=[graph.pk]))
    assert response.status_code == 200 and response.context["has_change_permission"] is False
    html = response.content.decode()
    assert "decompose task" in html and "look &lt;b&gt;up&lt;/b&gt;" in html and "Flushed" in html
    assert reverse("agents:graph_detail", args=[graph.pk]) in html
    assert f"{reverse('admin:graphs_graphop_changelist')}?graph__id__exact={graph.pk}" in html


def test_graphs_and_their_operations_are_read_only(admin_client):
    graph = graph_with_history("Find the port")
    op = GraphOp.objects.filter(graph=graph).first()

    for model, row in (("graph", graph), ("graphop", op)):
        change_url = reverse(f"admin:graphs_{model}_change", args=[row.pk])
        assert admin_client.get(change_url).context["has_change_permission"] is False
        assert admin_client.post(change_url, {"task": "changed", "rationale": "changed"}).status_code == 403
        assert admin_client.get(reverse(f"admin:graphs_{model}_add")).status_code == 403
        assert (
            admin_client.post(reverse(f"admin:graphs_{model}_delete", args=[row.pk]), {"post": "yes"}).status_code
            == 403
        )

    graph.refresh_from_db()
    op.refresh_from_db()
    assert graph.task == "Find the port" and op.rationale == "the task"
    assert (
        admin_client.get(reverse("admin:graphs_graphop_changelist"), {"graph__id__exact": graph.pk}).status_code == 200
    )
    assert admin_client.get(reverse("admin:graphs_turn_changelist")).status_code == 200
