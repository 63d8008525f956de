"""Stored XSS: a script payload in every field a user, a swarm node or an LLM writes (node names,
descriptions, context and content; agents' names, instructions, context variables and messages; brains' records,
goals, plan and neurons; graphs' tasks, thoughts, rationales and turns; searches' questions,
answers and steps; LLM calls' messages and replies; usernames; spaces' and tokens' names), then
every page that shows them, whole and as the partials htmx asks for, and the admin's lists and
forms: the payload is shown escaped, never as markup. Writes that echo what they were sent (a flash message, an error, a
refreshed panel) are checked the same way.

tests/browser/test_xss.py loads the main pages in a browser and checks that no script ran."""

import json
from urllib.parse import quote

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils.html import escape

from tests.security.payloads import NAME, PAYLOADS, RAW, SCRIPT, SHORT
from tests.security.routes import PAGE, ROUTES, admin_url, agent_settings, client_for, site_patterns
from tests.security.world import World, build_world

pytestmark = pytest.mark.django_db

PATTERNS = {pattern.route: pattern for pattern in site_patterns()}


@pytest.fixture
def world(db) -> World:
    return build_world(PAYLOADS)


def checked(response, where: str) -> list[str]:
    """A payload that reached an HTML answer as markup, if any did."""
    if response.streaming:
        # A download: read to its end, as a browser does, so that it gives back the request's
        # slot (memsite.concurrency) when the test client closes it.
        response.getvalue()
    if not response["Content-Type"].startswith("text/html"):
        return []
    return [f"{where}: unescaped {match.group(0)!r}" for match in RAW.finditer(response.content.decode())]


def page_urls(world: World) -> list[tuple[str, str, bool]]:
    """(route, url, htmx) for every page the table lists, and the other nodes a page can show."""
    urls = []
    for route, row in ROUTES.items():
        if row.kind == PAGE and "GET" in row.calls:
            url = reverse(PATTERNS[route].name, kwargs=row.kwargs(world)) + row.calls["GET"].query
            urls.append((route, url, row.calls["GET"].htmx))
    detail = "memory/<str:node_id>/"
    for node in (world.folder, world.project, world.project_file, world.user_document, world.internal["user"]):
        urls.append((detail, reverse("memory:node_detail", args=[node.pk]), False))
    urls.append(("user/preferences/", f"{reverse('memory:user_preferences')}?doc={world.user_document.pk}", False))
    urls.append((detail, reverse("memory:node_children", args=[world.internal["user"].pk]), True))
    urls.append(("graphs/<int:graph_id>/", f"{reverse('agents:graph_detail', args=[world.graph.pk])}?node=3", False))
    return urls


def test_every_page_shows_stored_text_escaped(world):
    client = client_for(world, "staff")
    problems = []
    for _, url, htmx in page_urls(world):
        for as_htmx in {htmx, True}:  # the whole page, and the partial htmx gets from the same URL
            response = client.get(url, **({"HTTP_HX_REQUEST": "true"} if as_htmx else {}))
            assert response.status_code in (200, 286, 302), (url, response.status_code)
            problems += checked(response, f"{url}{' (htmx)' if as_htmx else ''}")
    assert not problems, "\n".join(problems)


def test_the_admin_shows_stored_text_escaped(world):
    client = client_for(world, "staff")
    problems = []
    for model in admin.site._registry:
        label = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        for pattern in PATTERNS.values():
            if pattern.name in (f"{label}_changelist", f"{label}_change", f"{label}_delete", f"{label}_history"):
                url = admin_url(world, pattern)
                response = client.get(url)
                if response.status_code == 403 and pattern.name.endswith("_delete"):
                    continue  # a model the admin does not delete
                assert response.status_code == 200, (url, response.status_code)
                problems += checked(response, url)
    problems += checked(client.get(reverse("admin:index")), "admin:index")
    assert not problems, "\n".join(problems)


def echoes(world: World) -> list[tuple[str, dict]]:
    """Writes whose answers show what was sent: (URL, form) with a payload in every text."""
    node, agent, graph = world.folder.pk, world.agent.pk, world.graph.pk
    return [
        (
            reverse("memory:node_create", args=[node]),
            {"type": "document", "name": NAME, "description": SCRIPT, "content": SCRIPT},
        ),
        # The same name again: the conflict's message names it.
        (reverse("memory:node_create", args=[node]), {"type": "folder", "name": world.document.name}),
        (
            reverse("memory:node_update", args=[world.document.pk]),
            {"version": world.document.version, "name": NAME + " 2", "description": SCRIPT},
        ),
        (reverse("memory:node_update", args=[world.document.pk]), {"version": 999, "name": NAME + " 3"}),
        (
            reverse("memory:document_save", args=[world.user_document.pk]),
            {"version": world.user_document.version, "content": SCRIPT},
        ),
        (reverse("memory:markdown_preview"), {"content": SCRIPT + "\n\n[x](javascript:window.__xss=1)"}),
        # A destination that is no node, and one that is no folder: the refusals name them.
        (reverse("memory:node_move", args=[world.document.pk]), {"parent": NAME[:64]}),
        (reverse("memory:node_move", args=[world.document.pk]), {"parent": world.project_file.pk}),
        (
            reverse("memory:document_save", args=[world.document.pk]),
            {"version": world.document.version, "content": SCRIPT, "panel": "1"},
        ),
        (reverse("agents:agent_create"), {"name": SCRIPT + " new", "model": SCRIPT[:100], "instructions": SCRIPT}),
        (reverse("agents:agent_create"), {"name": world.agent.name, "model": "gpt-4"}),
        (
            reverse("agents:agent_create"),
            {
                "name": SCRIPT + " with variables",
                "model": "gpt-4",
                "instructions": SCRIPT + " $who",
                "context_variables": json.dumps({"who": SCRIPT}),
            },
        ),
        (reverse("agents:agent_create"), {"name": SCRIPT + " bad", "model": "gpt-4", "context_variables": SCRIPT}),
        (
            reverse("agents:agent_edit", args=[agent]),
            {
                **agent_settings(world),
                "name": SCRIPT + " edited",
                "instructions": SCRIPT + " $who",
                "context_variables": json.dumps({"who": SCRIPT}),
            },
        ),
        (reverse("agents:agent_edit", args=[agent]), {**agent_settings(world), "context_variables": SCRIPT}),
        (reverse("agents:agent_edit", args=[agent]), {**agent_settings(world), "instructions": SCRIPT + " $nobody"}),
        (reverse("agents:message_append", args=[agent]), {"role": "user", "content": SCRIPT}),
        (reverse("agents:brain_goal_create", args=[agent]), {"text": SCRIPT}),
        (reverse("agents:brain_chat", args=[agent]), {"text": SCRIPT}),
        (reverse("agents:brain_chat", args=[agent]), {"text": "goal: " + SCRIPT}),
        (reverse("agents:brain_ticking_start", args=[agent]), {"interval_s": SCRIPT}),
        (reverse("agents:graph_create"), {"task": SCRIPT}),
        (reverse("agents:graph_memorize", args=[graph]), {"role_0": SHORT, "content_0": SCRIPT}),
        (
            reverse("agents:graph_memorize", args=[graph]),
            {"messages_json": json.dumps([{"role": SHORT, "content": 1}])},
        ),
        (
            reverse("memory:search_start"),
            {"questions": SCRIPT, "context": SCRIPT, "output": "answer", "fallback": "none"},
        ),
        (
            reverse("memory:search_start"),
            {"questions": "q", "start_node": NAME[:64], "output": "answer", "fallback": "none"},
        ),
        (reverse("memory:question_answer", args=[world.question.pk]), {"answer": SCRIPT}),
        (reverse("spaces:space_create"), {"slug": "made", "name": SCRIPT}),
        (reverse("spaces:space_update", args=["default"]), {"name": SCRIPT + " 2"}),
        (reverse("spaces:member_set", args=["default"]), {"username": NAME, "role": "reader"}),
        (reverse("spaces:token_create", args=["default"]), {"name": SCRIPT, "write_under": NAME}),
        (reverse("spaces:token_create", args=["default"]), {"name": SCRIPT + " 3", "write_under": "/notes/"}),
    ]


@pytest.mark.parametrize("htmx", [False, True], ids=["form", "htmx"])
def test_writes_echo_what_they_were_sent_escaped(world, htmx):
    client = client_for(world, "staff")
    problems = []
    for url, form in echoes(world):
        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        response = client.post(url, form, follow=not htmx, **headers)
        assert response.status_code < 500, (url, response.status_code)
        problems += checked(response, f"POST {url}")
    assert not problems, "\n".join(problems)


def test_the_api_never_answers_html(world):
    """Stored text comes back from the API as JSON or as the bytes that were stored, never as a
    type a browser would render, and browsers are told not to guess."""
    client = client_for(world, "token")
    for url in (
        f"/api/nodes/{world.document.pk}/",
        f"/api/nodes/{world.document.pk}/content/",
        f"/api/nodes/{world.project_file.pk}/content/",
        f"/api/agents/{world.agent.pk}/brain/thoughts/",
        f"/api/searches/{world.search.pk}/",
        "/api/nodes/memory_missing/",
    ):
        response = client.get(url)
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["Content-Type"].split(";")[0] in (
            "application/json", "text/markdown", "application/octet-stream"
        ), (url, response["Content-Type"])  # fmt: skip


def test_a_download_is_an_attachment(world):
    client = client_for(world, "staff")
    response = client.get(reverse("memory:project_download", args=[world.project.pk]))
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"


def shown(world: World) -> list[tuple[str, list[str]]]:
    """Pages and the stored texts each must show, so that a page that stopped showing a field
    cannot make the tests above pass by accident."""
    text, name, short = PAYLOADS.text, PAYLOADS.name, PAYLOADS.short
    agent, graph, search = world.agent.pk, world.graph.pk, world.search.pk
    return [
        (reverse("memory:node_detail", args=[world.document.pk]), [name("plan.md"), text("The plan."), name("notes")]),
        (reverse("memory:node_detail", args=[world.project_file.pk]), [name("main.py"), text("print('hello')")]),
        (
            f"{reverse('memory:user_preferences')}?doc={world.user_document.pk}",
            [name("habits.md"), text("Works at night.")],
        ),
        (reverse("memory:browser"), [name("keeper")]),
        (reverse("memory:node_history", args=[world.document.pk]), [name("reader"), name("plan.md")]),
        (
            f"{reverse('memory:node_move_folders', args=[world.document.pk])}?q=archive",
            [name("archive"), name("notes")],
        ),
        (f"{reverse('memory:node_move_folders', args=[world.document.pk])}?q={quote(NAME)}", [NAME]),
        (reverse("memory:document_edit", args=[world.document.pk]), [text("The plan."), text("Step one.")]),
        (reverse("agents:agent_list"), [text("scout")]),
        (
            reverse("agents:agent_detail", args=[agent]),
            # The instructions as written, and as sent with the variable's value.
            [
                text("Help the user."),
                f"{text('Help the user.')} {text('Ada')}",
                text("Hello there."),
                text("Hello, Ada."),
                text("A cited reply."),
                "/" + name("cited notes"),
            ],
        ),
        (reverse("agents:agent_edit", args=[agent]), [text("scout"), text("Help the user.")]),
        (reverse("agents:agent_delete", args=[agent]), [text("scout")]),
        (reverse("agents:checkpoint_restore", args=[agent, world.checkpoint.pk]), [text("scout")]),
        (
            reverse("agents:brain_detail", args=[agent]),
            [
                text("A thought."),
                text("A fact."),
                text("Hello there."),  # the conversation is the chat
                text("A cited reply."),
                "/" + name("cited notes"),
                text("A self_instruction."),
                text("Learn the user's habits."),
                text("List the notes."),
                text("I read notes."),
            ],
        ),
        (reverse("agents:graph_list"), [text("The task.")]),
        (
            f"{reverse('agents:graph_detail', args=[graph])}?node=2",
            [
                text("The task."),
                text("A note."),
                short("assistant"),
                text("I look up the port."),
                text("decompose"),
                text("Why it was done."),
            ],
        ),
        (reverse("memory:search_list"), [text("Where is the plan?")]),
        (
            reverse("memory:search_detail", args=[search]),
            # The answer is markdown, rendered and sanitized as a document is: its text is shown.
            [text("Where is the plan?"), text("Planning the week."), text("Entered notes."), "In notes."],
        ),
        (
            reverse("memory:search_step_call", args=[search, world.step.number]),
            [text("user prompt"), text("the reply")],
        ),
        (reverse("memory:question_list"), [text("What does the user prefer?")]),
        (reverse("spaces:space_list"), [name("Default"), name("The lab")]),
        (reverse("spaces:token_list", args=["default"]), [name("swarm node a"), name("reader")]),
        (reverse("spaces:member_list", args=["default"]), [name("reader"), name("keeper")]),
        (reverse("llm:call", args=[world.llm_call.pk]), [text("system prompt"), text("the reply"), text("An error.")]),
    ]


def test_the_pages_do_show_the_payloads_escaped(world):
    client = client_for(world, "staff")
    missing = []
    for url, texts in shown(world):
        html = client.get(url, HTTP_HX_REQUEST="true" if "/steps/" in url else "").content.decode()
        missing += [f"{url}: {value[-40:]!r}" for value in texts if escape(value) not in html]
    assert not missing, "\n".join(missing)
