"""Stored XSS in a real browser: with a script payload in every stored text (see
tests/security/test_xss.py), the main pages, the admin's, and what htmx swaps into them (a
folder's children, a graph node's panel, a chat reply, a markdown preview) run no script and
open no dialog. Every write htmx sends carries the CSRF token."""

import pytest
from django.conf import settings
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from tests.security.payloads import PAYLOADS, SCRIPT
from tests.security.world import build_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("memory_roots", "offline_llm"),
]

# Long enough for an <img src=x> to fail and fire its onerror, were it markup.
SETTLE_MS = 300


def test_no_stored_payload_runs(page, live_server, screenshot):
    world = build_world(PAYLOADS)
    client = Client()
    client.force_login(world.staff)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    writes: list[dict] = []
    page.on("request", lambda request: writes.append(request.headers) if request.method != "GET" else None)

    def visit(url: str) -> None:
        page.goto(f"{live_server.url}{url}")
        settle(url)

    def settle(where: str) -> None:
        page.wait_for_timeout(SETTLE_MS)
        assert page.evaluate("typeof window.__xss") == "undefined", f"a payload ran on {where}"
        assert not dialogs, f"{where} opened {dialogs}"

    agent, graph, search = world.agent.pk, world.graph.pk, world.search.pk
    for url in (
        reverse("memory:browser"),
        reverse("memory:node_detail", args=[world.document.pk]),
        reverse("memory:node_detail", args=[world.project_file.pk]),
        f"{reverse('memory:user_preferences')}?doc={world.user_document.pk}",
        reverse("memory:search_list"),
        reverse("memory:search_detail", args=[search]),
        reverse("memory:question_list"),
        reverse("agents:agent_list"),
        reverse("agents:agent_detail", args=[agent]),
        reverse("agents:brain_detail", args=[agent]),
        reverse("agents:graph_list"),
        reverse("agents:graph_detail", args=[graph]),
        reverse("llm:ledger"),
        reverse("llm:call", args=[world.llm_call.pk]),
        reverse("spaces:space_list"),
        reverse("spaces:member_list", args=["default"]),
        reverse("spaces:token_list", args=["default"]),
        reverse("spaces:space_settings", args=["default"]),
        reverse("admin:memory_node_changelist"),
        reverse("admin:memory_node_change", args=[quote(world.document.pk)]),
        reverse("admin:context_agent_change", args=[agent]),
        reverse("admin:graphs_graph_change", args=[graph]),
        reverse("admin:memory_search_change", args=[search]),
        reverse("admin:llm_llmcall_change", args=[world.llm_call.pk]),
    ):
        visit(url)

    # What htmx swaps in: a folder's children, a step's LLM call, a graph node's panel.
    visit(reverse("memory:browser"))
    user = world.internal["user"]
    page.locator(f"#item-{user.pk} > details > summary .caret").click()
    expect(page.locator(f"#children-{user.pk} #item-{world.folder.pk}")).to_be_visible()
    page.locator(f"#item-{world.folder.pk} > details > summary .caret").click()
    expect(page.locator(f"#item-{world.document.pk} .node-link")).to_be_visible()
    page.locator(f"#item-{world.document.pk} .node-link").click()
    expect(page).to_have_url(f"{live_server.url}{reverse('memory:node_detail', args=[world.document.pk])}")
    settle("the tree")

    visit(reverse("memory:search_detail", args=[search]))
    page.locator(f"#step-{world.step.number} summary").click()
    expect(page.locator(f"#step-{world.step.number} .step-call")).not_to_contain_text("Loading")
    settle("a search step")

    visit(reverse("agents:graph_detail", args=[graph]))
    page.locator("#graph-node-2").click()
    expect(page.locator("#node-panel-title")).to_contain_text("Node 2")
    settle("a graph node's panel")

    # Writes through htmx that show what was sent.
    visit(reverse("agents:brain_detail", args=[agent]))
    page.get_by_label("Message").fill(SCRIPT)
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_label("Message")).to_have_value("")
    settle("a chat reply")

    visit(f"{reverse('memory:user_preferences')}?doc={world.user_document.pk}")
    page.locator("#document-content").fill(SCRIPT + "\n\n[x](javascript:window.__xss=1)")
    page.locator("#document-content").press("End")
    expect(page.locator("#preview")).not_to_contain_text("Works at night.")
    expect(page.locator("#preview script, #preview img, #preview [onerror]")).to_have_count(0)
    expect(page.locator("#preview a[href^='javascript']")).to_have_count(0)
    settle("a markdown preview")
    screenshot("xss-preview")

    assert writes, "no write was sent"
    assert all(headers.get("x-csrftoken") for headers in writes), "an htmx write went without the CSRF token"

    # The check itself works: the same payload as markup does run here, on a page without
    # memsite's Content-Security-Policy (which would stop it too).
    page.goto("about:blank")
    page.set_content(f"<body>{SCRIPT}</body>")
    page.wait_for_function("window.__xss === 1")
