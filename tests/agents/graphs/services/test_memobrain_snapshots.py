"""Snapshots as MemoBrain's own `save_memory` writes them (tests/fixtures/memobrain/): they
import, export unchanged, and MemoBrain's `load_memory` reads the export as the same graph."""

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from agents.graphs import selectors, services
from agents.graphs.models import GraphEdge, GraphNode
from agents.graphs.services.graphs import MAX_TASK_CHARS
from tests.agents.graphs.services.test_graphs import SEED_EXAMPLE, evidence_patch, memorize, state
from tests.factories import default_space, system
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "memobrain"
RUNS = ["research_run", "loops"]


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    settings.MEMSITE_LLM_MAX_REPAIRS = 0


@pytest.fixture
def queued(monkeypatch):
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: None)


@pytest.fixture
def graph():
    return services.graph_create(
        space=default_space(), task="Find the port", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )


def saved(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


def imported(graph, name: str) -> dict:
    document = json.loads(saved(name))
    services.graph_snapshot_import(graph=graph, document=document)
    return document


def memobrain_view(document: dict) -> dict:
    """What MemoBrain's `load_memory` makes of a snapshot: nodes under int keys, in the file's
    order, each field as written; edges in order, a missing rationale read as ""; the leaves
    (no edge out, and an `active` that is true or "Flushed"); the next id (one past the
    largest); and each value's JSON type, since its graph finds nodes by int: an edge end
    written as "2" would point nowhere."""
    nodes = {int(key): node for key, node in document["nodes"].items()}
    edges = [(edge["src"], edge["dst"], edge.get("rationale", "")) for edge in document["edges"]]
    sources = {src for src, _, _ in edges}
    return {
        "nodes": nodes,
        "order": list(nodes),
        "node types": {
            key: {name: type(value).__name__ for name, value in node.items()} for key, node in nodes.items()
        },
        "edges": edges,
        "edge types": [tuple(type(part).__name__ for part in edge) for edge in edges],
        "leaves": [key for key, node in nodes.items() if key not in sources and node.get("active", True)],
        "next id": max(nodes) + 1,
    }


@pytest.mark.parametrize("name", RUNS)
def test_a_memobrain_snapshot_comes_back_field_by_field(api, graph, name):
    original = json.loads(saved(name))
    url = reverse("graphs-api:graph-snapshot", args=[graph.pk])

    assert api.put(url, saved(name), content_type="application/json").status_code == 200
    exported = json.loads(api.get(url).content)

    assert list(exported) == list(original) == ["nodes", "edges"]
    assert list(exported["nodes"]) == list(original["nodes"])
    for key, node in original["nodes"].items():
        assert list(exported["nodes"][key]) == list(node), key
        for field, value in node.items():
            mine = exported["nodes"][key][field]
            assert (type(mine), mine) == (type(value), value), (key, field)
    assert len(exported["edges"]) == len(original["edges"])
    for number, (mine, theirs) in enumerate(zip(exported["edges"], original["edges"], strict=True)):
        assert [(type(value), value) for value in mine.values()] == [(type(value), value) for value in theirs.values()]
        assert list(mine) == list(theirs), number
    assert json.dumps(exported, sort_keys=True) == json.dumps(original, sort_keys=True)


@pytest.mark.parametrize(("name", "leaves", "next_id"), [("research_run", [7, 9], 11), ("loops", [5], 7)])
def test_memobrain_reads_the_export_as_the_same_graph(graph, name, leaves, next_id):
    original = imported(graph, name)

    exported = json.loads(json.dumps(selectors.graph_snapshot(graph=graph)))

    assert memobrain_view(exported) == memobrain_view(original)
    assert (memobrain_view(exported)["leaves"], memobrain_view(exported)["next id"]) == (
        leaves,
        next_id,
    )
    graph.refresh_from_db()
    assert graph.next_node_id == next_id


def test_what_a_memobrain_run_holds_is_stored_as_it_was(graph):
    imported(graph, "research_run")

    # Folding siblings moved both of their edges to the summary: each repeat is its own row, in
    # the order MemoBrain made them, with its own rationale (null where the fold gave none).
    edges = list(GraphEdge.objects.filter(graph=graph).order_by("id").values_list("src", "dst", "rationale"))
    assert [(src, dst) for src, dst, _ in edges[:5]] == [
        (1, 10),
        (1, 10),
        (10, 8),
        (10, 8),
        (10, 8),
    ]
    assert [why for _, _, why in edges[2:5]] == [None, None, None]
    assert edges[7:9] == [
        (8, 7, "the page mentions a sibling"),
        (8, 7, "the brand history names the sibling"),
    ]
    assert len(edges[5][2]) > 1_000
    nodes = {node.node_id: node for node in GraphNode.objects.filter(graph=graph)}
    assert nodes[4].thought[0]["tool_call_id"] == "call_7"
    assert (nodes[4].thought[1]["sources"], nodes[4].thought[1]["score"]) == (
        ["https://example.org/vakko"],
        0.92,
    )
    assert len(nodes[4].thought[1]["content"]) > 8_000 and len(nodes[1].thought) > 8_000
    assert nodes[8].thought.startswith('[{"role": "assistant", "content": "Read the pages on Vakko (\\u015een')
    assert nodes[1].state == "flushed"
    assert [(nodes[n].state, nodes[n].folded_into) for n in (2, 3, 4, 5)] == [("folded", 10)] * 2 + [("folded", 8)] * 2
    graph.refresh_from_db()
    assert graph.task == nodes[1].thought[:MAX_TASK_CHARS]


@pytest.mark.parametrize(
    "change",
    [
        lambda doc: doc["nodes"]["1"].update(active="Flushed"),
        lambda doc: doc["nodes"]["1"].update(active=False),
        lambda doc: doc["edges"].append({"src": 2, "dst": 1, "rationale": "a cycle"}),
        lambda doc: doc["edges"].append({"src": 2, "dst": 2, "rationale": "a self-loop"}),
        lambda doc: doc["edges"].append({"src": 1, "dst": 2, "rationale": "the same pair again"}),
        lambda doc: doc["edges"][0].update(rationale=None),
        lambda doc: doc["edges"][0].update(rationale="why " * 5_000),
        lambda doc: doc["nodes"]["2"]["thought"][0].update(content="x" * 20_000, tool_call_id="call_1", n=[1, {}]),
        lambda doc: doc["nodes"]["2"].update(thought="t" * 50_000),
    ],
)
def test_what_memobrain_writes_imports_and_exports_unchanged(graph, change):
    document = json.loads(json.dumps(SEED_EXAMPLE))
    change(document)

    services.graph_snapshot_import(graph=graph, document=document)

    assert selectors.graph_snapshot(graph=graph) == document


def test_an_edge_without_a_rationale_reads_as_memobrain_reads_it(graph):
    document = json.loads(json.dumps(SEED_EXAMPLE))
    del document["edges"][0]["rationale"]

    services.graph_snapshot_import(graph=graph, document=document)

    assert selectors.graph_snapshot(graph=graph)["edges"] == [{"src": 1, "dst": 2, "rationale": ""}]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda doc: doc["nodes"]["2"].update(thought=["a note"]),
            "at nodes.2.thought.0: Input should be a valid dictionary.",
        ),
        (
            lambda doc: doc["nodes"]["2"].update(thought=[{"role": "user"}]),
            "at nodes.2.thought.0.content: Field required.",
        ),
        (
            lambda doc: doc["nodes"]["2"]["thought"][0].update(role=None),
            "at nodes.2.thought.0.role: Input should be a valid string.",
        ),
        (
            lambda doc: doc["nodes"]["2"].update(thought=None),
            "at nodes.2.thought: must be a string or a list of notes",
        ),
        (
            lambda doc: doc["edges"][0].update(rationale=7),
            "at edges.0.rationale: Input should be a valid string.",
        ),
        (
            lambda doc: doc["nodes"]["2"].update(kind="task"),
            "a graph has one task node, this snapshot has 2",
        ),
        (
            lambda doc: doc["edges"].append({"src": 2, "dst": 9}),
            "edge 1 names node 9, which is not in the snapshot",
        ),
    ],
)
def test_what_memsite_cannot_keep_is_refused_and_changes_nothing(graph, change, message):
    document = json.loads(json.dumps(SEED_EXAMPLE))
    change(document)
    before = state(graph)

    with pytest.raises(Exception) as refused:
        services.graph_snapshot_import(graph=graph, document=document)

    assert message in refused.value.message
    assert state(graph) == before


def test_memorize_goes_on_in_an_imported_graph_with_cycles(
    graph, openai_gateway: FakeOpenAI, queued, django_capture_on_commit_callbacks
):
    imported(graph, "loops")  # 2 -> 6 -> 4 -> 2, and 4 -> 4
    before = list(GraphEdge.objects.filter(graph=graph).order_by("id").values_list("src", "dst", "rationale"))
    openai_gateway.script(Reply.json(evidence_patch("2")))

    op = memorize(
        graph,
        [{"role": "assistant", "content": "scan 9000"}, {"role": "tool", "content": "closed"}],
        django_capture_on_commit_callbacks,
    )

    assert op.status == "applied", op.error
    edges = list(GraphEdge.objects.filter(graph=graph).order_by("id").values_list("src", "dst", "rationale"))
    assert edges == [*before, (2, 7, "decompose"), (8, 7, "")]


def test_a_fold_keeps_the_imported_repeats_in_their_order(
    graph, openai_gateway: FakeOpenAI, queued, django_capture_on_commit_callbacks
):
    imported(graph, "research_run")
    before = list(GraphEdge.objects.filter(graph=graph).order_by("id").values_list("src", "dst", "rationale"))
    fold = {
        "ids": [6],
        "notes": [{"role": "user", "content": "Born 1915."}],
        "rationale": "answered",
    }
    openai_gateway.script(Reply.json({"flush_ops": [], "fold_ops": [fold]}))

    with django_capture_on_commit_callbacks(execute=True):
        op = services.graph_recall(graph=graph, by=system())
    services.graph_work(graph_id=graph.pk)
    op.refresh_from_db()

    assert op.status == "applied", op.error
    # 10 -> 6 moves to the summary, 11, in its place; 6 -> 10 would then close 10 -> 11 -> 10,
    # which memsite's own folds never make: it is left out. The repeats stay as they were.
    assert op.detail["summaries"] == [11] and op.detail["edges_left_out"] == [[6, 10]]
    edges = list(GraphEdge.objects.filter(graph=graph).order_by("id").values_list("src", "dst", "rationale"))
    assert edges == [*before[:5], (10, 11, before[5][2]), *before[7:]]


@pytest.mark.parametrize("name", RUNS)
def test_the_dashboard_shows_an_imported_memobrain_graph(client, user, graph, name):
    document = imported(graph, name)
    client.force_login(user)
    url = reverse("agents:graph_detail", args=[graph.pk])

    page = client.get(url)

    assert page.status_code == 200
    drawn = {int(node) for node in re.findall(r'id="graph-node-(\d+)"', page.content.decode())}
    assert drawn == {int(key) for key in document["nodes"]}
    for key in document["nodes"]:
        panel = client.get(f"{url}?node={key}")
        assert panel.status_code == 200 and f'id="node-panel-title">Node {key} ' in panel.content.decode()


def test_a_flushed_task_is_still_shown_to_the_model(
    graph, openai_gateway: FakeOpenAI, queued, django_capture_on_commit_callbacks
):
    imported(graph, "research_run")  # MemoBrain flushed its task, node 1
    openai_gateway.script(Reply.json(evidence_patch("7")))

    op = memorize(
        graph,
        [{"role": "assistant", "content": "scan 9000"}, {"role": "tool", "content": "closed"}],
        django_capture_on_commit_callbacks,
    )

    assert op.status == "applied", op.error
    graph_block = openai_gateway.requests[-1].body["messages"][1]["content"]
    assert "[1] task: Begin to solve the task" in graph_block


def test_offline_memorize_goes_on_when_the_task_is_flushed(graph, queued, django_capture_on_commit_callbacks):
    imported(graph, "research_run")
    # No active subtask either: the new step can hang only from an active node of another kind.
    GraphNode.objects.filter(graph=graph, kind="subtask").update(state="flushed")
    before = GraphNode.objects.filter(graph=graph).count()

    op = memorize(
        graph,
        [{"role": "assistant", "content": "scan 9000"}, {"role": "tool", "content": "closed"}],
        django_capture_on_commit_callbacks,
    )

    assert op.status == "applied", op.error
    assert GraphNode.objects.filter(graph=graph).count() > before
