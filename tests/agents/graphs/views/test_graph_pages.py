import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agents.graphs import services
from agents.graphs import views as views_graphs
from agents.graphs.models import Graph, GraphOp, Turn
from tests.agents.conftest import HTMX
from tests.agents.graphs.services.test_graphs import SEED_EXAMPLE
from tests.factories import AgentFactory, default_space, system

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"

# Seed 004's example, with the evidence of subtask 2 folded into summary 7 and the evidence of
# subtask 3 flushed.
SNAPSHOT = {
    "nodes": {
        **SEED_EXAMPLE["nodes"],
        "3": {
            "node_id": 3,
            "kind": "subtask",
            "thought": "Find testing strategies",
            "related_turn_ids": [4],
            "active": True,
        },
        "4": {
            "node_id": 4,
            "kind": "evidence",
            "thought": "Modular architecture found",
            "related_turn_ids": [2],
            "active": False,
        },
        "5": {
            "node_id": 5,
            "kind": "evidence",
            "thought": "DDD patterns documented",
            "related_turn_ids": [3],
            "active": False,
        },
        "6": {
            "node_id": 6,
            "kind": "evidence",
            "thought": "Jest + E2E recommended",
            "related_turn_ids": [4, 9],
            "active": "Flushed",
        },
        "7": {
            "node_id": 7,
            "kind": "summary",
            "thought": [{"role": "assistant", "content": "Architecture summary: modules and DDD."}],
            "related_turn_ids": [2, 3],
            "active": True,
        },
    },
    "edges": [
        {"src": 1, "dst": 2, "rationale": "decompose task"},
        {"src": 1, "dst": 3, "rationale": "decompose task"},
        {"src": 4, "dst": 2, "rationale": "support"},
        {"src": 5, "dst": 2, "rationale": "support"},
        {"src": 6, "dst": 3, "rationale": "support"},
        {"src": 7, "dst": 2, "rationale": "summarizes 4 and 5"},
    ],
}
STATES = {
    1: ("task", "active"),
    2: ("subtask", "active"),
    3: ("subtask", "active"),
    4: ("evidence", "folded"),
    5: ("evidence", "folded"),
    6: ("evidence", "flushed"),
    7: ("summary", "active"),
}


def page_url(graph: Graph, **query) -> str:
    url = reverse("agents:graph_detail", args=[graph.pk])
    return f"{url}?{'&'.join(f'{key}={value}' for key, value in query.items())}" if query else url


def node_url(graph: Graph, node_id: int) -> str:
    return reverse("agents:graph_node", args=[graph.pk, node_id])


def drawn_nodes(html: str) -> dict[int, tuple[str, str]]:
    return {
        int(node): (kind, state)
        for kind, state, node in re.findall(r'<g class="graph-node kind-(\w+) state-(\w+)" id="graph-node-(\d+)"', html)
    }


def polling(html: str) -> str | None:
    """The URL the operations poll, if they poll."""
    section = re.search(r'<section class="card graph-ops-card" id="graph-ops"[^>]*>', html, re.DOTALL).group(0)
    found = re.search(r'hx-get="([^"]+)"', section)
    return found.group(1).replace("&amp;", "&") if found else None


def turn(graph: Graph, turn_id: int, role: str, content: str) -> Turn:
    return Turn.objects.create(
        graph=graph, turn_id=turn_id, role=role, content=content, token_count=len(content.split()) + 4
    )


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def queued(monkeypatch) -> list[dict]:
    """The graph work queued for the worker."""
    calls: list[dict] = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: calls.append(kwargs))
    return calls


@pytest.fixture
def graph() -> Graph:
    return services.graph_create(
        space=default_space(), task="Find the port", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )


@pytest.fixture
def lived_in(graph) -> Graph:
    """The seed's example with a folded and a flushed node, and the turns its nodes name (but
    turn 9)."""
    for turn_id, (role, content) in enumerate(
        [
            ("user", "Research NestJS best practices"),
            ("assistant", "I will look at architecture first."),
            ("assistant", "search('nestjs architecture')"),
            ("tool", "Modular architecture; DDD."),
            ("tool", "Jest with E2E tests " + "x" * 2_000),
        ]
    ):
        turn(graph, turn_id, role, content)
    Graph.objects.filter(pk=graph.pk).update(next_turn_id=5)
    services.graph_snapshot_import(graph=graph, document=SNAPSHOT)
    return Graph.objects.get(pk=graph.pk)


# -- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "name", "args"),
    [
        ("get", "agents:graph_list", 0),
        ("post", "agents:graph_create", 0),
        ("get", "agents:graph_detail", 1),
        ("get", "agents:graph_live", 1),
        ("get", "agents:graph_node", 2),
        ("post", "agents:graph_recall", 1),
        ("post", "agents:graph_memorize", 1),
    ],
)
def test_pages_need_a_login(client, graph, queued, method, name, args):
    url = reverse(name, args=[graph.pk, 1][:args])
    response = getattr(client, method)(url, {"task": "intrude", "role_0": "user", "content_0": "hello"})

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert Graph.objects.count() == 1 and not Turn.objects.exists()
    assert list(GraphOp.objects.values_list("kind", flat=True)) == ["create"] and not queued


def test_writes_need_post_and_a_csrf_token(user, graph, queued):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    for name, args in [
        ("agents:graph_create", []),
        ("agents:graph_recall", [graph.pk]),
        ("agents:graph_memorize", [graph.pk]),
    ]:
        assert client.get(reverse(name, args=args)).status_code == 405
        assert (
            client.post(reverse(name, args=args), {"task": "t", "role_0": "user", "content_0": "x"}).status_code == 403
        )
    assert Graph.objects.count() == 1 and GraphOp.objects.count() == 1 and not queued


def test_every_form_carries_a_csrf_token(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()
    main = html[html.index("<main") :]
    forms = re.findall(r'<form [^>]*method="post".*?</form>', main, re.DOTALL)
    assert len(forms) == 2  # recall, memorize
    assert all('name="csrfmiddlewaretoken"' in form for form in forms)


def test_unknown_graphs_and_nodes_are_not_found(user_client, graph):
    assert user_client.get(reverse("agents:graph_detail", args=[999])).status_code == 404
    assert user_client.get(reverse("agents:graph_live", args=[999]), **HTMX).status_code == 404
    assert user_client.post(reverse("agents:graph_recall", args=[999]), **HTMX).status_code == 404
    assert user_client.get(node_url(graph, 42), **HTMX).status_code == 404


# -- the list and creating a graph -------------------------------------------------------------


def test_the_list_shows_the_graphs(user_client, lived_in):
    scout = AgentFactory(name="scout", model="gpt-4")
    theirs = services.graph_create(space=default_space(), task="Map the notes", agent=scout)

    html = user_client.get(reverse("agents:graph_list")).content.decode()

    rows = re.findall(r'<tr id="graph-(\d+)">(.*?)</tr>', html, re.DOTALL)
    assert [int(pk) for pk, _ in rows] == [theirs.pk, lived_in.pk]  # newest first
    assert "Map the notes" in rows[0][1] and reverse("agents:agent_detail", args=[scout.pk]) in rows[0][1]
    assert '4 active <span class="muted">of 7</span>' in rows[1][1]
    assert page_url(lived_in) in rows[1][1]
    assert re.search(r'<a href="/graphs/" aria-current="page">Graphs</a>', html)


def test_the_list_of_one_agents_graphs(user_client, graph):
    scout = AgentFactory(name="scout", model="gpt-4")
    theirs = services.graph_create(space=default_space(), task="Map the notes", agent=scout)

    html = user_client.get(reverse("agents:graph_list"), {"agent": scout.pk}).content.decode()

    assert re.findall(r'<tr id="graph-(\d+)">', html) == [str(theirs.pk)]
    assert "Reasoning graphs of scout" in html
    assert f'<option value="{scout.pk}" selected>' in html  # a graph started here is the agent's


def test_the_agents_page_links_to_its_graphs(user_client):
    scout = AgentFactory(name="scout", model="gpt-4")
    html = user_client.get(reverse("agents:agent_detail", args=[scout.pk])).content.decode()
    assert f'href="{reverse("agents:graph_list")}?agent={scout.pk}"' in html


def test_a_graph_is_created(user_client):
    response = user_client.post(reverse("agents:graph_create"), {"task": "  Find the port  ", "agent": ""})

    graph = Graph.objects.get()
    assert response.status_code == 302 and response["Location"] == page_url(graph)
    assert graph.task == "Find the port" and graph.agent is None
    html = user_client.get(response["Location"]).content.decode()
    assert f"Created graph {graph.pk}." in html and drawn_nodes(html) == {1: ("task", "active")}


def test_a_graph_is_created_for_an_agent_over_htmx(user_client):
    scout = AgentFactory(name="scout", model="gpt-4")

    response = user_client.post(reverse("agents:graph_create"), {"task": "Map the notes", "agent": scout.pk}, **HTMX)

    graph = Graph.objects.get()
    assert response.status_code == 200 and response["HX-Redirect"] == page_url(graph)
    assert (graph.agent, graph.model) == (scout, "gpt-4")
    html = user_client.get(page_url(graph)).content.decode()
    assert f'href="{reverse("agents:agent_detail", args=[scout.pk])}" id="agent-link"' in html


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"task": "   "}, "Task: This field is required."),
        ({"task": "x" * 8_001}, "Task: Ensure this value has at most 8000 characters"),
        ({"task": "Find it", "agent": "999"}, "Agent: Select a valid choice."),
    ],
)
def test_a_bad_graph_is_refused_with_a_message(user_client, data, message):
    response = user_client.post(reverse("agents:graph_create"), data)

    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="alert alert-error"' in html and message in html
    assert "<h1>Reasoning graphs</h1>" in html and not Graph.objects.exists()


def test_a_graph_the_service_refuses_keeps_the_form_and_says_why(user_client, settings):
    settings.MEMSITE_LLM_MODELS = {"tiny": {"context_window": 1, "max_output_tokens": 1}}
    tiny = AgentFactory(name="tiny", model="tiny")

    response = user_client.post(reverse("agents:graph_create"), {"task": f"Find {SCRIPT}", "agent": tiny.pk}, **HTMX)

    assert response.status_code == 400
    html = response.content.decode()
    assert html.lstrip().startswith('<details class="action card" id="create-graph" open>')
    assert "trigger_tokens must be a whole number of tokens" in html
    assert f"Find {ESCAPED}</textarea>" in html and SCRIPT not in html
    assert not Graph.objects.exists()


# -- the page ----------------------------------------------------------------------------------


def test_the_page_draws_every_node_with_its_kind_and_state(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()

    assert drawn_nodes(html) == STATES
    svg = html[html.index('<svg class="graph-svg"') : html.index("</svg>", html.index('<svg class="graph-svg"'))]
    assert 'aria-label="Reasoning graph of 7 nodes (4 active, 2 folded, 1 flushed) in 3 layers, with 6 edges."' in svg
    assert svg.count('<rect class="node-inner"') == 1  # the summary's double edge
    assert "folded → #7" in svg and ">flushed</text>" in svg
    edges = re.findall(
        r'<g class="graph-edge( edge-faded)?" data-src="(\d+)" data-dst="(\d+)">\s*<title>([^<]*)</title>', svg
    )
    assert {(int(src), int(dst)): (bool(faded), title) for faded, src, dst, title in edges} == {
        (1, 2): (False, "1 → 2: decompose task"),
        (1, 3): (False, "1 → 3: decompose task"),
        (4, 2): (True, "4 → 2: support"),
        (5, 2): (True, "5 → 2: support"),
        (6, 3): (True, "6 → 3: support"),
        (7, 2): (False, "7 → 2: summarizes 4 and 5"),
    }
    legend = html[html.index('<ul class="graph-legend"') :]
    for entry in ("task", "subtask", "evidence", "summary", "active", "folded", "flushed"):
        assert f"</svg>{entry}" in legend
    for node_id in STATES:
        assert f'hx-get="{node_url(lived_in, node_id)}"' in svg


def test_the_page_shows_the_context_against_trigger_and_target(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()

    tokens = re.search(
        r'<dd id="graph-tokens"><strong>(\d+)</strong> against a trigger of 8000 and a target of 4000', html
    )
    assert tokens and int(tokens.group(1)) > 0
    assert 'class="context-marker context-marker-trigger" style="left: 83.333%"' in html
    assert 'class="context-marker context-marker-target" style="left: 41.667%"' in html
    assert "of 5 sent as they were" in html


def test_the_operations_with_their_tokens_and_errors(user_client, lived_in):
    GraphOp.objects.create(
        graph=lived_in,
        kind="recall",
        status="applied",
        rationale="folded 4 and 5",
        tokens_before=900,
        tokens_after=600,
        ended_at=timezone.now(),
    )
    GraphOp.objects.create(
        graph=lived_in, kind="memorize", status="rejected", error="edge 0 names node 42", ended_at=timezone.now()
    )

    html = user_client.get(page_url(lived_in)).content.decode()

    rows = re.findall(r'<tr class="op op-(\w+)" id="op-\d+">(.*?)</tr>', html, re.DOTALL)
    assert [status for status, _ in rows] == ["rejected", "applied", "applied", "applied"]  # newest first
    assert "edge 0 names node 42" in rows[0][1]
    applied = rows[1][1]
    assert (
        "folded 4 and 5" in applied
        and "900 → 600" in applied
        and '<span class="delta delta-down">-300</span>' in applied
    )
    assert ">import</td>" in rows[2][1] and ">create</td>" in rows[3][1]


def test_the_operations_shown_are_bounded(user_client, graph, monkeypatch):
    monkeypatch.setattr(views_graphs, "OPS_SHOWN", 3)
    for _ in range(5):
        GraphOp.objects.create(graph=graph, kind="recall", status="applied", ended_at=timezone.now())
    html = user_client.get(page_url(graph)).content.decode()
    assert len(re.findall(r'<tr class="op op-', html)) == 3 and "newest first, 3 of 6" in html


# -- a node ------------------------------------------------------------------------------------


def test_a_node_opens_to_its_thought_and_turns(user_client, lived_in):
    response = user_client.get(node_url(lived_in, 2), **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<aside class="card node-panel" id="node-panel"')
    assert "<main" not in html
    notes = re.findall(
        r'<li class="note"><span class="badge">(\w+)</span><div class="note-content">([^<]*)</div></li>', html
    )
    assert notes == [("assistant", "Searching for architecture..."), ("user", "Results: modular patterns...")]
    turns = re.findall(r'<li class="message message-(\w+)" id="turn-(\d+)">', html)
    assert turns == [("assistant", "2"), ("tool", "3")]
    assert "search(&#x27;nestjs architecture&#x27;)" in html and "Modular architecture; DDD." in html
    parents = re.search(r"<dt>Parents</dt><dd>(.*?)</dd>", html).group(1)
    children = re.search(r"<dt>Children</dt><dd>(.*?)</dd>", html).group(1)
    assert re.findall(r">#(\d+)</a>", parents) == ["1"] and re.findall(r">#(\d+)</a>", children) == ["4", "5", "7"]
    assert "← <a" in html and "summarizes 4 and 5" in html


def test_a_long_turn_is_cut_and_a_missing_one_said(user_client, lived_in):
    html = user_client.get(node_url(lived_in, 6), **HTMX).content.decode()

    content = re.search(r'<pre class="code turn-content">(.*?)</pre>', html, re.DOTALL).group(1)
    assert len(content) == views_graphs.TURN_CHARS + 1 and content.endswith("…")
    assert "820 more characters not shown" in html
    assert re.search(r'id="turn-9">.*?not stored in this graph', html, re.DOTALL)
    assert "Flushed: its own notes stand for its turns" in html
    assert '<span class="badge state-badge state-flushed" id="node-panel-state">flushed</span>' in html


def test_a_folded_node_links_to_its_summary(user_client, lived_in):
    html = user_client.get(node_url(lived_in, 4), **HTMX).content.decode()
    fate = re.search(r'<p class="muted node-fate">(.*?)</p>', html, re.DOTALL).group(1)
    assert fate.startswith("Folded into <a") and f'hx-get="{node_url(lived_in, 7)}"' in fate


def test_a_node_without_javascript(user_client, lived_in):
    response = user_client.get(node_url(lived_in, 3))
    assert response.status_code == 302 and response["Location"] == page_url(lived_in, node=3) + "#node-panel"

    html = user_client.get(page_url(lived_in, node=3)).content.decode()
    assert '<h2 id="node-panel-title">Node 3 ' in html and "Find testing strategies" in html


def test_the_page_opens_on_the_task(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()
    assert '<h2 id="node-panel-title">Node 1 ' in html and 'id="turn-0"' in html and 'id="turn-1"' in html


# -- recall and memorize -----------------------------------------------------------------------


def test_a_recall_is_queued(user_client, lived_in, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(reverse("agents:graph_recall", args=[lived_in.pk]), **HTMX)

    assert response.status_code == 200 and queued == [{"graph_id": lived_in.pk}]
    op = GraphOp.objects.filter(kind="recall").get()
    assert op.status == "queued"
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card graph-actions" id="graph-actions"')
    assert f"Recall queued (operation {op.pk})." in html
    assert re.search(r'id="graph-ops"[^>]*hx-swap-oob="true"', html) and f'id="op-{op.pk}"' in html
    assert polling(html).startswith(reverse("agents:graph_live", args=[lived_in.pk]))
    assert re.search(r'id="graph-context"[^>]*hx-swap-oob="true"', html)


def test_a_step_is_memorized_from_rows(user_client, graph, queued, django_capture_on_commit_callbacks):
    data = {
        "role_0": "assistant",
        "content_0": "look up the port",
        "role_1": "tool",
        "content_1": "8080",
        "role_2": "",
        "content_2": "",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(reverse("agents:graph_memorize", args=[graph.pk]), data, **HTMX)

    assert response.status_code == 200 and queued == [{"graph_id": graph.pk}]
    assert list(Turn.objects.values_list("turn_id", "role", "content")) == [
        (0, "assistant", "look up the port"),
        (1, "tool", "8080"),
    ]
    op = GraphOp.objects.get(kind="memorize")
    assert op.status == "queued" and op.detail == {"turn_ids": [0, 1]}
    html = response.content.decode()
    assert f"Stored as turns 0–1; memorize queued (operation {op.pk})." in html
    assert "look up the port</textarea>" not in html  # the form is cleared
    assert polling(html) is not None


def test_a_step_is_memorized_from_json(user_client, graph, queued, django_capture_on_commit_callbacks):
    pasted = '[{"role": "Agent_Analyst", "content": "the port is 8080"}]'
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(
            reverse("agents:graph_memorize", args=[graph.pk]), {"role_0": "assistant", "messages_json": pasted}, **HTMX
        )

    assert response.status_code == 200 and "Stored as turn 0;" in response.content.decode()
    assert list(Turn.objects.values_list("role", "content")) == [("Agent_Analyst", "the port is 8080")]
    assert len(queued) == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"role_0": "assistant", "content_0": ""}, "Write at least one message, or paste a JSON list."),
        ({"role_0": "", "content_0": "orphan"}, "Message 1 needs a role."),
        ({"role_0": "assistant", "content_0": "x", "messages_json": "[]"}, "Fill in the rows or paste JSON, not both."),
        ({"messages_json": "[{"}, "The JSON does not parse"),
        ({"messages_json": '{"role": "user"}'}, "The JSON must be a list"),
        (
            {"messages_json": '[{"role": "user", "content": "x", "name": "n"}]'},
            "messages[0] must be an object with role and content.",
        ),
        ({"messages_json": '[{"role": " ", "content": "x"}]'}, "messages[0].role must be a non-empty string."),
        ({"messages_json": "[]"}, "messages must be a list of 1 to 200 messages."),
    ],
)
def test_a_bad_step_is_refused_with_a_message_and_nothing_is_written(user_client, graph, queued, data, message):
    response = user_client.post(reverse("agents:graph_memorize", args=[graph.pk]), data, **HTMX)

    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="alert alert-error"' in html and message in html
    assert "hx-swap-oob" not in html
    assert not Turn.objects.exists() and not GraphOp.objects.filter(kind="memorize").exists() and not queued


def test_a_refused_step_keeps_what_was_written(user_client, graph):
    response = user_client.post(
        reverse("agents:graph_memorize", args=[graph.pk]), {"role_0": "", "content_0": f"say {SCRIPT}"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 400 and f"say {ESCAPED}</textarea>" in html and SCRIPT not in html


def test_recall_and_memorize_work_without_javascript(user_client, graph, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(reverse("agents:graph_recall", args=[graph.pk]))
    assert response.status_code == 302 and response["Location"] == page_url(graph)
    assert "Recall queued" in user_client.get(page_url(graph)).content.decode()

    response = user_client.post(reverse("agents:graph_memorize", args=[graph.pk]), {"messages_json": "nope"})
    assert response.status_code == 400
    html = response.content.decode()
    assert f"<h1>Graph {graph.pk}</h1>" in html and "The JSON does not parse" in html
    assert "nope</textarea>" in html and re.search(
        r"<details class=\"action\" open>\s*<summary>Or paste a JSON list", html
    )
    assert len(queued) == 1


# -- polling -----------------------------------------------------------------------------------


def test_an_idle_graph_does_not_poll(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()
    assert polling(html) is None and 'data-settled="true"' in html and "Nothing queued." in html

    response = user_client.get(reverse("agents:graph_live", args=[lived_in.pk]), **HTMX)
    assert response.status_code == 286


def test_a_queued_operation_polls_and_the_poll_brings_the_changes(user_client, lived_in, queued):
    services.graph_recall(graph=lived_in, by=system())
    html = user_client.get(page_url(lived_in)).content.decode()
    poll = polling(html)
    assert poll and 'hx-trigger="every 2s"' in html and "1 queued" in html

    response = user_client.get(poll, **HTMX)
    partial = response.content.decode()
    assert response.status_code == 200 and polling(partial) == poll
    assert "hx-swap-oob" not in partial  # nothing changed

    # A worker folds node 3 into a new summary and ends the operation.
    services.graph_snapshot_import(
        graph=lived_in,
        document={
            **SNAPSHOT,
            "nodes": {
                **SNAPSHOT["nodes"],
                "3": {**SNAPSHOT["nodes"]["3"], "active": False},
                "8": {
                    "node_id": 8,
                    "kind": "summary",
                    "thought": "testing: Jest",
                    "related_turn_ids": [4],
                    "active": True,
                },
            },
        },
    )
    GraphOp.objects.filter(kind="recall").update(
        status="applied", tokens_before=100, tokens_after=80, ended_at=timezone.now()
    )
    response = user_client.get(poll, **HTMX)
    partial = response.content.decode()
    assert response.status_code == 286 and polling(partial) is None
    for part in ('id="graph-drawing"', 'id="graph-context"', 'id="graph-nodes"'):
        assert re.search(rf'{part}[^>]*hx-swap-oob="true"', partial), part
    assert drawn_nodes(partial)[3] == ("subtask", "folded") and drawn_nodes(partial)[8] == ("summary", "active")


def test_an_operation_no_worker_takes_stops_the_polling(user_client, graph, queued):
    services.graph_recall(graph=graph, by=system())
    GraphOp.objects.filter(kind="recall").update(
        created_at=timezone.now() - timedelta(seconds=views_graphs.AWAIT_S + 1)
    )

    html = user_client.get(page_url(graph)).content.decode()

    assert polling(html) is None and "no worker has taken it yet" in html


def test_a_running_worker_keeps_the_page_polling(user_client, graph):
    Graph.objects.filter(pk=graph.pk).update(lease_until=timezone.now() + timedelta(minutes=1))
    html = user_client.get(page_url(graph)).content.decode()
    assert polling(html) is not None and "a worker is on this graph" in html


def test_the_live_view_without_javascript_goes_to_the_page(user_client, graph):
    response = user_client.get(reverse("agents:graph_live", args=[graph.pk]))
    assert response.status_code == 302 and response["Location"] == page_url(graph)


# -- escaping ----------------------------------------------------------------------------------


def test_written_text_is_escaped(user_client, graph):
    turn(graph, 0, "user", SCRIPT)
    Graph.objects.filter(pk=graph.pk).update(next_turn_id=1)
    services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {
                    "node_id": 1,
                    "kind": "task",
                    "thought": f"task {SCRIPT}",
                    "related_turn_ids": [0],
                    "active": True,
                },
                "2": {
                    "node_id": 2,
                    "kind": "subtask",
                    "thought": [{"role": SCRIPT, "content": SCRIPT}],
                    "related_turn_ids": [],
                    "active": True,
                },
                "3": {"node_id": 3, "kind": "evidence", "thought": SCRIPT, "related_turn_ids": [], "active": "Flushed"},
            },
            "edges": [{"src": 1, "dst": 2, "rationale": SCRIPT}, {"src": 3, "dst": 2, "rationale": SCRIPT}],
        },
    )
    GraphOp.objects.create(
        graph=graph, kind="recall", status="rejected", rationale=SCRIPT, error=SCRIPT, detail={"why": SCRIPT}
    )

    pages = [
        user_client.get(page_url(graph)).content.decode(),
        user_client.get(reverse("agents:graph_list")).content.decode(),
        user_client.get(node_url(graph, 1), **HTMX).content.decode(),
        user_client.get(node_url(graph, 2), **HTMX).content.decode(),
    ]

    for html in pages:
        assert SCRIPT not in html and "<script>alert" not in html
    page, listing, task, subtask = pages
    assert ESCAPED in listing and f"task {ESCAPED}" in task and f"{ESCAPED}</pre>" in task  # the turn
    assert subtask.count(ESCAPED) >= 3  # the note's role and content, the edge's rationale
    assert f"3 → 2: {ESCAPED}" in page and "alert(1)&lt;/script&gt;" in page
