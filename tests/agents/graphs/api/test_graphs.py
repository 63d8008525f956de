import json
from urllib.parse import urlsplit

import pytest
import yaml
from django.urls import reverse
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

from agents.graphs import selectors, services
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, Turn
from tests.agents.graphs.services.test_graphs import SEED_EXAMPLE
from tests.factories import AgentFactory, GraphFactory, system
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db

# Four nodes: the task, a subtask it decomposes into, evidence that supports the subtask, and
# flushed evidence; edges point both ways, as the seed's decompose and support edges do.
INDEXED = {
    "nodes": {
        "1": {"node_id": 1, "kind": "task", "thought": "T", "related_turn_ids": [], "active": True},
        "2": {"node_id": 2, "kind": "subtask", "thought": "s", "related_turn_ids": [], "active": True},
        "3": {"node_id": 3, "kind": "evidence", "thought": "e", "related_turn_ids": [], "active": True},
        "4": {"node_id": 4, "kind": "evidence", "thought": "f", "related_turn_ids": [], "active": "Flushed"},
    },
    "edges": [
        {"src": 1, "dst": 2, "rationale": "decompose"},
        {"src": 3, "dst": 2, "rationale": "support"},
        {"src": 4, "dst": 2, "rationale": "support"},
    ],
}


def url(name: str, *args) -> str:
    return reverse(f"graphs-api:{name}", args=args)


def step(number: int) -> list[dict]:
    return [
        {"role": "assistant", "content": f"I look up service {number}."},
        {"role": "tool", "content": f"Service {number} listens on port {8000 + number}."},
    ]


def stored(graph) -> tuple[list, list, list, list, dict]:
    """Everything a graph holds, to compare before and after a refused request."""
    return (
        list(GraphNode.objects.filter(graph=graph).order_by("node_id").values()),
        list(GraphEdge.objects.filter(graph=graph).order_by("id").values()),
        list(Turn.objects.filter(graph=graph).order_by("turn_id").values()),
        list(GraphOp.objects.filter(graph=graph).order_by("id").values()),
        Graph.objects.filter(pk=graph.pk).values().get(),
    )


def page_of(response) -> tuple[list, str | None, str | None]:
    body = response.json()
    return body["results"], body["next"], body["previous"]


def path_of(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


def put_snapshot(api, graph, document, **extra):
    body = document if isinstance(document, bytes) else json.dumps(document).encode()
    return api.put(url("graph-snapshot", graph.pk), body, content_type="application/json", **extra)


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def queued(monkeypatch):
    """The graphs whose work was queued on commit."""
    ids: list[int] = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: ids.append(graph_id))
    return ids


@pytest.fixture
def graph():
    return GraphFactory(task="Find the port")


@pytest.fixture
def indexed(graph):
    services.graph_snapshot_import(graph=graph, document=INDEXED)
    return graph


# -- access ------------------------------------------------------------------------------------

ENDPOINTS = [
    ("get", "graph-detail", (), None),
    ("post", "graph-memorize", (), {"messages": step(1)}),
    ("post", "graph-recall", (), None),
    ("get", "graph-context", (), None),
    ("get", "graph-nodes", (), None),
    ("get", "graph-node", (1,), None),
    ("get", "graph-leaves", (), None),
    ("get", "graph-ops", (), None),
    ("get", "graph-snapshot", (), None),
    ("put", "graph-snapshot", (), SEED_EXAMPLE),
]


@pytest.mark.parametrize(("method", "name", "args", "body"), ENDPOINTS)
def test_every_endpoint_requires_authentication(graph, method, name, args, body, django_capture_on_commit_callbacks):
    before = stored(graph)
    with django_capture_on_commit_callbacks() as callbacks:
        response = getattr(APIClient(), method)(url(name, graph.pk, *args), body, format="json")
    assert response.status_code in (401, 403)
    assert stored(graph) == before and not callbacks


def test_creating_a_graph_requires_authentication():
    response = APIClient().post(url("graph-create"), {"task": "Find the port"}, format="json")
    assert response.status_code in (401, 403)
    assert not Graph.objects.exists()


@pytest.mark.parametrize(("method", "name", "args", "body"), ENDPOINTS)
def test_an_unknown_graph_is_not_found(api, graph, method, name, args, body):
    before = stored(graph)
    response = getattr(api, method)(url(name, 999, *args), body, format="json")
    assert response.status_code == 404 and response.json() == {"detail": "No graph 999."}
    assert stored(graph) == before and Graph.objects.count() == 1


# -- creating and reading ----------------------------------------------------------------------


def test_a_graph_is_created_with_its_task_node(api):
    response = api.post(
        url("graph-create"),
        {"task": "  Find the port  ", "trigger_tokens": 2_000, "target_tokens": 1_000},
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    graph = Graph.objects.get()
    assert response["Location"] == url("graph-detail", graph.pk)
    assert body["id"] == graph.pk and body["task"] == "Find the port" and body["agent"] is None
    assert (body["trigger_tokens"], body["target_tokens"]) == (2_000, 1_000)
    assert body["nodes"] == {"active": 1, "folded": 0, "flushed": 0} and body["turns"] == 0
    assert (body["next_node_id"], body["next_turn_id"]) == (2, 0)
    assert list(GraphNode.objects.filter(graph=graph).values_list("node_id", "kind", "thought")) == [
        (1, "task", "Find the port")
    ]
    assert api.get(url("graph-detail", graph.pk)).json() == body


def test_a_graph_for_an_agent_counts_with_the_agents_model_by_default(api):
    agent = AgentFactory(model="gpt-4")
    body = api.post(url("graph-create"), {"task": "Find the port", "agent": agent.pk}, format="json").json()

    assert body["agent"] == agent.pk and body["model"] == "gpt-4"
    assert 0 < body["target_tokens"] < body["trigger_tokens"] <= 8_192


def test_a_graph_names_exactly_the_documented_fields(api, graph):
    from agents.graphs.api.serializers import GraphSerializer

    assert set(api.get(url("graph-detail", graph.pk)).json()) == set(GraphSerializer().fields)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({}, "task", "required"),
        ({"task": "   "}, "task", "blank"),
        ({"task": 42}, "task", "Must be a string."),
        ({"task": "x" * 8_001}, "task", "8000"),
        ({"task": "t", "trigger_tokens": "2000"}, "trigger_tokens", "Must be an integer."),
        ({"task": "t", "trigger_tokens": 0}, "trigger_tokens", "greater than or equal to 1"),
        ({"task": "t", "agent": "scout"}, "agent", "Must be an integer."),
        ({"task": "t", "priority": 1}, "priority", "Unknown field"),
        ({"task": "t", "trigger_tokens": 1_000, "target_tokens": 1_000}, "detail", "must be below trigger_tokens"),
        ({"task": "t", "model": "gpt-4", "trigger_tokens": 100_000}, "detail", "from 1 to 8192"),
    ],
)
def test_bad_input_creates_nothing(api, body, field, message):
    response = api.post(url("graph-create"), body, format="json")

    assert response.status_code == 400
    problem = response.json()[field]
    assert message in (problem if isinstance(problem, str) else problem[0])
    assert not Graph.objects.exists() and not GraphNode.objects.exists()


def test_a_body_nested_too_deeply_is_refused(api, graph):
    before = stored(graph)
    nested = b"[" * 100_000 + b"]" * 100_000
    for target in (url("graph-create"), url("graph-memorize", graph.pk)):
        response = api.post(target, nested, content_type="application/json")
        assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    assert stored(graph) == before and Graph.objects.count() == 1


def test_a_graph_for_an_unknown_agent_is_not_found(api):
    response = api.post(url("graph-create"), {"task": "Find the port", "agent": 999}, format="json")
    assert response.status_code == 404 and "999" in response.json()["detail"]
    assert not Graph.objects.exists()


def test_the_graph_counts_its_nodes_by_state_and_its_turns(api, graph, queued, django_capture_on_commit_callbacks):
    services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {"node_id": 1, "kind": "task", "thought": "T", "related_turn_ids": []},
                "2": {"node_id": 2, "kind": "evidence", "thought": "a", "related_turn_ids": [0], "active": False},
                "3": {"node_id": 3, "kind": "evidence", "thought": "b", "related_turn_ids": [1], "active": "Flushed"},
                "4": {"node_id": 4, "kind": "summary", "thought": "s", "related_turn_ids": [0]},
            },
            "edges": [],
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.graph_memorize(by=system(), graph=graph, messages=step(1) + step(2))

    body = api.get(url("graph-detail", graph.pk)).json()

    assert body["nodes"] == {"active": 2, "folded": 1, "flushed": 1}
    assert body["turns"] == 4 and (body["next_node_id"], body["next_turn_id"]) == (5, 4)


# -- memorize and recall -----------------------------------------------------------------------


def test_memorize_stores_the_turns_and_queues_the_work(api, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        first = api.post(url("graph-memorize", graph.pk), {"messages": step(1)}, format="json")
        second = api.post(url("graph-memorize", graph.pk), {"messages": step(2) + step(3)}, format="json")

    assert first.status_code == second.status_code == 202
    body = first.json()
    assert (body["kind"], body["status"], body["graph"]) == ("memorize", "queued", graph.pk)
    assert body["data"] == {"turn_ids": [0, 1]} and body["ended_at"] is None
    assert second.json()["data"] == {"turn_ids": [2, 3, 4, 5]}
    assert list(Turn.objects.filter(graph=graph).values_list("turn_id", "role")) == [
        (0, "assistant"),
        (1, "tool"),
        (2, "assistant"),
        (3, "tool"),
        (4, "assistant"),
        (5, "tool"),
    ]
    assert queued == [graph.pk, graph.pk]


def test_a_worker_memorizes_the_queued_turns(api, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        op_id = api.post(url("graph-memorize", graph.pk), {"messages": step(1)}, format="json").json()["id"]

    services.graph_work(graph_id=graph.pk)

    ops, _, _ = page_of(api.get(url("graph-ops", graph.pk)))
    [memorized] = [op for op in ops if op["id"] == op_id]
    assert memorized["status"] == "applied" and memorized["ended_at"] is not None
    assert memorized["provider"] == "offline"  # the offline heuristics answered its calls
    # Active steps stand for nothing yet: the turns are sent as they were.
    assert memorized["tokens_after"] == memorized["tokens_before"] > 0
    added = memorized["data"]["pairs"][0]["node_ids"]
    nodes, _, _ = page_of(api.get(url("graph-nodes", graph.pk)))
    assert [node["node_id"] for node in nodes] == [1, *sorted(added.values())]
    assert all(node["related_turn_ids"] == [0, 1] for node in nodes[1:])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "required"),
        ({"messages": []}, "at least 1"),
        ({"messages": "hello"}, "Expected a list"),
        ({"messages": ["hello"]}, "Expected a dictionary"),
        ({"messages": [{"role": "assistant"}]}, "required"),
        ({"messages": [{"role": " ", "content": "x"}]}, "blank"),
        ({"messages": [{"role": "assistant", "content": 5}]}, "Must be a string."),
        ({"messages": [{"role": "assistant", "content": "x", "name": "scout"}]}, "Unknown field"),
        ({"messages": [{"role": "r" * 65, "content": "x"}]}, "64"),
        ({"messages": [{"role": "assistant", "content": "x"}] * 201}, "no more than 200"),
        ({"messages": step(1), "wait": True}, "Unknown field"),
    ],
)
def test_bad_turns_store_nothing(api, graph, queued, body, message, django_capture_on_commit_callbacks):
    before = stored(graph)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(url("graph-memorize", graph.pk), body, format="json")

    assert response.status_code == 400 and message in json.dumps(response.json())
    assert stored(graph) == before and queued == []


@pytest.mark.parametrize(
    "body, errors",
    [
        ({"messages": []}, {"messages": {"non_field_errors": ["Ensure this field has at least 1 elements."]}}),
        (
            {"messages": ["hello"]},
            {"messages": {"0": {"non_field_errors": ["Invalid data. Expected a dictionary, but got str."]}}},
        ),
        ({"messages": [{"role": "assistant"}]}, {"messages": {"0": {"content": ["This field is required."]}}}),
    ],
)
def test_bad_turns_are_named_where_they_are_as_documented(api, graph, body, errors):
    response = api.post(url("graph-memorize", graph.pk), body, format="json")
    assert response.status_code == 400 and response.json() == errors
    assert_documented(response, "/api/graphs/{graph_id}/memorize/", "post")


def test_a_recall_is_queued(api, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(url("graph-recall", graph.pk))

    assert response.status_code == 202
    body = response.json()
    assert (body["kind"], body["status"], body["rationale"]) == ("recall", "queued", "asked for")
    assert queued == [graph.pk]
    assert GraphOp.objects.get(pk=body["id"]).status == "queued"


# -- the context -------------------------------------------------------------------------------


def test_the_context_is_the_turns_while_nothing_stands_for_them(api, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.graph_memorize(by=system(), graph=graph, messages=step(1))

    response = api.get(url("graph-context", graph.pk))

    assert response.status_code == 200
    body = response.json()
    assert body["messages"] == step(1) and body["raw_turns"] == [0, 1] and body["stand_ins"] == []
    assert body["tokens"] == selectors.graph_context(graph=graph).tokens > 0
    assert (body["model"], body["trigger_tokens"], body["target_tokens"]) == ("gpt-4", 8_000, 4_000)


def test_the_context_says_what_stands_for_which_turns(api, graph, queued, django_capture_on_commit_callbacks):
    # Eight turns: the first two and last four are always sent; turns 2 and 3 belong to a
    # flushed step, whose notes are sent in their place.
    with django_capture_on_commit_callbacks(execute=True):
        services.graph_memorize(by=system(), graph=graph, messages=step(1) + step(2) + step(3) + step(4))
    services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {"node_id": 1, "kind": "task", "thought": "Find the port"},
                "2": {
                    "node_id": 2,
                    "kind": "evidence",
                    "thought": [{"role": "tool", "content": "Service 2 is on 8002."}],
                    "related_turn_ids": [2, 3],
                    "active": "Flushed",
                },
            },
            "edges": [{"src": 2, "dst": 1, "rationale": "support"}],
        },
    )

    body = api.get(url("graph-context", graph.pk)).json()

    assert body["raw_turns"] == [0, 1, 4, 5, 6, 7]
    [stand_in] = body["stand_ins"]
    assert stand_in["node_id"] == 2 and stand_in["turn_ids"] == [2, 3] and stand_in["tokens"] > 0
    assert body["messages"][:2] == step(1) and body["messages"][3:] == step(3) + step(4)
    assert body["messages"][2]["role"] == "system" and "Service 2 is on 8002." in body["messages"][2]["content"]


# -- nodes and the index queries ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "node_ids"),
    [
        ({}, [1, 2, 3, 4]),
        ({"kind": "evidence"}, [3, 4]),
        ({"kind": "task"}, [1]),
        ({"state": "active"}, [1, 2, 3]),
        ({"state": "flushed"}, [4]),
        ({"kind": "evidence", "state": "active"}, [3]),
        ({"kind": "summary"}, []),
    ],
)
def test_nodes_by_kind_and_state(api, indexed, query, node_ids):
    response = api.get(url("graph-nodes", indexed.pk), query)
    assert response.status_code == 200
    results, _, _ = page_of(response)
    assert [node["node_id"] for node in results] == node_ids


def test_a_node_says_its_state_both_ways(api, indexed):
    from agents.graphs.api.serializers import GraphNodeSerializer

    results, _, _ = page_of(api.get(url("graph-nodes", indexed.pk)))
    assert [(node["state"], node["active"]) for node in results] == [
        ("active", True),
        ("active", True),
        ("active", True),
        ("flushed", "Flushed"),
    ]
    assert results[1] | {"created_at": None} == {
        "node_id": 2,
        "kind": "subtask",
        "thought": "s",
        "related_turn_ids": [],
        "state": "active",
        "active": True,
        "folded_into": None,
        "created_at": None,
    }
    assert set(results[0]) == set(GraphNodeSerializer().fields)


def test_nodes_come_a_page_at_a_time(api, indexed):
    first, next_link, previous = page_of(api.get(url("graph-nodes", indexed.pk), {"page_size": 3, "kind": "evidence"}))
    assert [node["node_id"] for node in first] == [3, 4] and next_link is None and previous is None

    first, next_link, _ = page_of(api.get(url("graph-nodes", indexed.pk), {"page_size": 3}))
    rest, last, previous = page_of(api.get(path_of(next_link)))
    assert [node["node_id"] for node in first + rest] == [1, 2, 3, 4] and last is None and previous


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"kind": "idea"}, "kind", "Must be one of task, subtask, evidence, summary; got 'idea'."),
        ({"state": "true"}, "state", "Must be one of active, folded, flushed; got 'true'."),
        ({"active": "true"}, "active", "Unknown field. Accepted fields: kind, state, cursor, page_size."),
        ({"page_size": "0"}, "page_size", "greater than or equal to 1"),
        ({"page_size": "many"}, "page_size", "valid integer"),
        ({"cursor": "nonsense"}, "cursor", "Invalid cursor"),
    ],
)
def test_bad_node_filters_are_refused(api, indexed, query, field, message):
    response = api.get(url("graph-nodes", indexed.pk), query)
    assert response.status_code == 400 and message in response.json()[field][0]


def test_a_node_with_its_children_parents_and_path_to_the_task(api, indexed):
    from agents.graphs.api.serializers import GraphNodeDetailSerializer

    subtask = api.get(url("graph-node", indexed.pk, 2)).json()
    evidence = api.get(url("graph-node", indexed.pk, 3)).json()
    task = api.get(url("graph-node", indexed.pk, 1)).json()

    assert (subtask["children"], subtask["parents"], subtask["path_to_root"]) == ([3, 4], [1], [2, 1])
    assert (evidence["children"], evidence["parents"], evidence["path_to_root"]) == ([], [2], [3, 2, 1])
    assert (task["children"], task["parents"], task["path_to_root"]) == ([2], [], [1])
    assert evidence["kind"] == "evidence" and evidence["thought"] == "e"
    assert set(evidence) == set(GraphNodeDetailSerializer().fields)


def test_an_unknown_node_is_not_found(api, indexed):
    response = api.get(url("graph-node", indexed.pk, 9))
    assert response.status_code == 404 and response.json() == {"detail": f"Graph {indexed.pk} has no node 9."}


def test_the_leaves_are_the_active_nodes_with_no_active_child(api, indexed):
    assert api.get(url("graph-leaves", indexed.pk)).json() == {"node_ids": [3]}
    assert api.get(url("graph-leaves", GraphFactory().pk)).json() == {"node_ids": [1]}


# -- operations --------------------------------------------------------------------------------


def test_operations_newest_first_a_page_at_a_time(api, graph, queued, django_capture_on_commit_callbacks):
    from agents.graphs.api.serializers import GraphOpSerializer

    with django_capture_on_commit_callbacks(execute=True):
        api.post(url("graph-memorize", graph.pk), {"messages": step(1)}, format="json")
        api.post(url("graph-recall", graph.pk))
    put_snapshot(api, graph, SEED_EXAMPLE)

    first, next_link, _ = page_of(api.get(url("graph-ops", graph.pk), {"page_size": 2}))
    rest, last, _ = page_of(api.get(path_of(next_link)))

    ops = first + rest
    assert [(op["kind"], op["status"]) for op in ops] == [
        ("import", "applied"),
        ("recall", "queued"),
        ("memorize", "queued"),
        ("create", "applied"),
    ]
    assert last is None and set(ops[0]) == set(GraphOpSerializer().fields)
    assert ops[0]["rationale"] == "snapshot imported" and ops[0]["error"] == ""
    assert ops[0]["data"] == {"nodes": 2, "edges": 1} and ops[0]["tokens_before"] is None


def test_another_graphs_operations_are_not_listed(api, graph):
    GraphFactory()
    ops, _, _ = page_of(api.get(url("graph-ops", graph.pk)))
    assert [op["graph"] for op in ops] == [graph.pk]


@pytest.mark.parametrize(("query", "field"), [({"page_size": "501"}, "page_size"), ({"cursor": "x"}, "cursor")])
def test_bad_page_parameters_are_refused(api, graph, query, field):
    response = api.get(url("graph-ops", graph.pk), query)
    assert response.status_code == 400 and field in response.json()


# -- snapshots ---------------------------------------------------------------------------------


def test_a_new_graphs_snapshot_is_its_task(api, graph):
    response = api.get(url("graph-snapshot", graph.pk))

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == {
        "nodes": {
            "1": {"node_id": 1, "kind": "task", "thought": "Find the port", "related_turn_ids": [], "active": True}
        },
        "edges": [],
    }


def test_the_seeds_example_imports_and_reads_back_exactly(api, graph):
    response = put_snapshot(api, graph, SEED_EXAMPLE)

    assert response.status_code == 200
    assert (response.json()["kind"], response.json()["status"]) == ("import", "applied")
    assert api.get(url("graph-snapshot", graph.pk)).json() == SEED_EXAMPLE
    detail = api.get(url("graph-detail", graph.pk)).json()
    assert detail["task"] == "Research NestJS best practices" and detail["next_node_id"] == 3


def test_a_snapshot_round_trips_between_graphs(api, indexed):
    exported = api.get(url("graph-snapshot", indexed.pk)).content
    other = GraphFactory()

    assert put_snapshot(api, other, exported).status_code == 200
    assert json.loads(api.get(url("graph-snapshot", other.pk)).content) == json.loads(exported) == INDEXED
    assert api.get(url("graph-node", other.pk, 4)).json()["state"] == "flushed"


def test_a_snapshot_keeps_the_graphs_turns(api, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.graph_memorize(by=system(), graph=graph, messages=step(1))

    put_snapshot(api, graph, SEED_EXAMPLE)

    assert list(Turn.objects.filter(graph=graph).values_list("turn_id", flat=True)) == [0, 1]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[1, 2]", "Invalid snapshot"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ({"nodes": {}}, "one task node, this snapshot has 0"),
        (
            {"nodes": {**SEED_EXAMPLE["nodes"], "2": {**SEED_EXAMPLE["nodes"]["2"], "thought": [7]}}},
            "Invalid snapshot at nodes.2.thought.0: Input should be a valid dictionary.",
        ),
        ({**SEED_EXAMPLE, "edges": [{"src": 1, "dst": 9}]}, "names node 9"),
        ({"nodes": {"1": {**SEED_EXAMPLE["nodes"]["1"], "kind": "idea"}}}, "Invalid snapshot at nodes.1.kind"),
        (
            {"nodes": {**SEED_EXAMPLE["nodes"], str(2**31): {**SEED_EXAMPLE["nodes"]["2"], "node_id": 2**31}}},
            "Invalid snapshot at nodes.2147483648.node_id",
        ),
    ],
)
def test_an_invalid_snapshot_changes_nothing(api, indexed, document, message):
    before = stored(indexed)

    response = put_snapshot(api, indexed, document)

    assert response.status_code == 400 and message in response.json()["detail"]
    assert stored(indexed) == before


def test_an_empty_body_is_not_a_snapshot(api, indexed):
    before = stored(indexed)
    response = api.generic(
        "PUT", url("graph-snapshot", indexed.pk), b"", content_type="application/json", CONTENT_LENGTH="0"
    )
    assert response.status_code == 400 and "request body" in response.json()["detail"]
    assert stored(indexed) == before


def test_a_snapshot_over_the_cap_is_413(api, indexed, settings):
    settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES = 100
    before = stored(indexed)

    response = put_snapshot(api, indexed, SEED_EXAMPLE)

    assert response.status_code == 413 and "the limit is 100 bytes" in response.json()["detail"]
    assert stored(indexed) == before


def test_a_snapshot_without_a_length_is_411(api, indexed):
    before = stored(indexed)
    response = api.generic(
        "PUT", url("graph-snapshot", indexed.pk), b"{}", content_type="application/json", CONTENT_LENGTH=""
    )
    assert response.status_code == 411
    assert stored(indexed) == before


# -- the schema --------------------------------------------------------------------------------


def test_every_graph_operation_is_in_the_schema(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    validate_schema(schema)
    operations = {(path, method) for path, item in schema["paths"].items() for method in item if method != "parameters"}
    graph = "/api/graphs/{graph_id}"
    assert {
        ("/api/graphs/", "post"),
        (f"{graph}/", "get"),
        (f"{graph}/memorize/", "post"),
        (f"{graph}/recall/", "post"),
        (f"{graph}/context/", "get"),
        (f"{graph}/nodes/", "get"),
        (f"{graph}/nodes/{{node_id}}/", "get"),
        (f"{graph}/leaves/", "get"),
        (f"{graph}/ops/", "get"),
        (f"{graph}/snapshot/", "get"),
        (f"{graph}/snapshot/", "put"),
    } <= operations
    nodes = schema["paths"][f"{graph}/nodes/"]["get"]
    assert {parameter["name"] for parameter in nodes["parameters"]} == {
        "graph_id",
        "kind",
        "state",
        "cursor",
        "page_size",
    }
    page = nodes["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][page]["properties"]["results"]["items"]["$ref"].endswith("/GraphNode")


def test_the_schema_generates_without_warnings():
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS, dict(GENERATOR_STATS._warn_cache)
