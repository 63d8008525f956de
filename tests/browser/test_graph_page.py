"""A reasoning graph in a real browser: the drawing, a node opened beside it without a reload,
a step memorized from the form, and the drawing following once a worker has run it."""

import re

import pytest
from playwright.sync_api import expect

from agents.graphs import services
from agents.graphs.models import GraphNode, GraphOp, Turn
from tests.browser.test_dashboard import log_in
from tests.factories import AgentFactory, UserFactory, default_space, system

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SNAPSHOT = {
    "nodes": {
        "1": {
            "node_id": 1,
            "kind": "task",
            "thought": "Research NestJS best practices",
            "related_turn_ids": [0],
            "active": True,
        },
        "2": {
            "node_id": 2,
            "kind": "subtask",
            "thought": [
                {"role": "assistant", "content": "Searching for architecture..."},
                {"role": "user", "content": "Results: modular patterns..."},
            ],
            "related_turn_ids": [1, 2],
            "active": True,
        },
        "3": {
            "node_id": 3,
            "kind": "evidence",
            "thought": "Modular architecture found",
            "related_turn_ids": [1],
            "active": False,
        },
        "4": {
            "node_id": 4,
            "kind": "evidence",
            "thought": "Mocha is the default",
            "related_turn_ids": [2],
            "active": "Flushed",
        },
        "5": {
            "node_id": 5,
            "kind": "summary",
            "thought": "Architecture: modules",
            "related_turn_ids": [1],
            "active": True,
        },
    },
    "edges": [
        {"src": 1, "dst": 2, "rationale": "decompose task"},
        {"src": 3, "dst": 2, "rationale": "support"},
        {"src": 4, "dst": 2, "rationale": "support"},
        {"src": 5, "dst": 2, "rationale": "summarizes 3"},
    ],
}


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None


@pytest.fixture
def queued(monkeypatch) -> list[dict]:
    """The graph work queued: the test runs it, as a worker would."""
    calls: list[dict] = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: calls.append(kwargs))
    return calls


def test_read_a_graph_and_memorize_a_step(page, live_server, screenshot, queued):
    agent = AgentFactory(name="scout", model="gpt-4")
    graph = services.graph_create(space=default_space(), task="Research NestJS best practices", agent=agent)
    services.graph_memorize(
        by=system(),
        graph=graph,
        messages=[
            {"role": "user", "content": "Research NestJS best practices"},
            {"role": "assistant", "content": "search('nestjs architecture')"},
            {"role": "tool", "content": "Modular architecture; DDD."},
        ],
    )
    GraphOp.objects.filter(kind="memorize").update(status="applied")
    services.graph_snapshot_import(graph=graph, document=SNAPSHOT)
    UserFactory(username="ada")
    graph_url = f"{live_server.url}/graphs/{graph.pk}/"

    page.goto(graph_url)
    expect(page).to_have_url(re.compile(r"/login/\?next=/graphs/\d+/$"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(graph_url)

    expect(page.locator("g.graph-node")).to_have_count(5)
    expect(page.locator("#graph-node-3")).to_have_class(re.compile(r"\bstate-folded\b"))
    expect(page.locator("#graph-node-4")).to_have_class(re.compile(r"\bstate-flushed\b"))
    expect(page.locator("#graph-node-5")).to_have_class(re.compile(r"\bkind-summary\b"))
    expect(page.locator("#node-panel-title")).to_contain_text("Node 1")
    expect(page.locator("#graph-ops")).to_have_attribute("data-settled", "true")
    screenshot("graph")

    page.locator("#graph-node-2").click()
    expect(page.locator("#node-panel-title")).to_contain_text("Node 2")
    expect(page.locator("#node-thought > li")).to_have_count(2)
    expect(page.locator("#turn-1")).to_contain_text("search('nestjs architecture')")
    expect(page).to_have_url(graph_url)  # opened in place
    screenshot("graph-node")

    page.get_by_label("Content 1").fill("search('nestjs testing')")
    page.get_by_label("Content 2").fill("Jest for unit tests; supertest for E2E.")
    page.get_by_role("button", name="Memorize").click()

    expect(page.locator("#graph-actions .alert-success")).to_contain_text("Stored as turns 3–4")
    expect(page.get_by_label("Content 1")).to_have_value("")
    op = GraphOp.objects.get(kind="memorize", status="queued")
    expect(page.locator(f"#op-{op.pk}")).to_contain_text("queued")
    expect(page.locator("#graph-ops")).to_have_attribute("data-settled", "false")
    assert queued == [{"graph_id": graph.pk}] * 2  # the setup's step, and this one
    assert list(Turn.objects.filter(graph=graph, turn_id__gte=3).values_list("role", flat=True)) == [
        "assistant",
        "tool",
    ]

    services.graph_work(graph_id=graph.pk)  # the worker's turn

    drawn = GraphNode.objects.filter(graph=graph).count()
    expect(page.locator(f"#op-{op.pk} .op-status")).not_to_have_text("queued", timeout=15_000)
    expect(page.locator("#graph-ops")).to_have_attribute("data-settled", "true")
    expect(page.locator("g.graph-node")).to_have_count(drawn)
    screenshot("graph-memorized")


def test_a_focused_node_opens_with_enter_or_space_and_no_other_key(page, live_server):
    graph = services.graph_create(space=default_space(), task="Research NestJS best practices")
    services.graph_snapshot_import(graph=graph, document=SNAPSHOT)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    opened: list[str] = []
    page.on("request", lambda request: opened.extend(re.findall(r"/nodes/(\d+)/$", request.url)))
    log_in(page, live_server)
    page.goto(f"{live_server.url}/graphs/{graph.pk}/")
    expect(page.locator("#node-panel-title")).to_contain_text("Node 1")

    page.locator("#graph-node-3").focus()
    page.keyboard.press("a")
    page.locator("#graph-node-2").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#node-panel-title")).to_contain_text("Node 2")
    page.locator("#graph-node-4").focus()
    page.keyboard.press(" ")
    expect(page.locator("#node-panel-title")).to_contain_text("Node 4")

    # A request for node 3 would have left before the one for node 2 that came back.
    assert opened == ["2", "4"]
    assert errors == []
