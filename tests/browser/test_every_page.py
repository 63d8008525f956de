"""Every page of the dashboard in a real browser, on the demo memory `make run` seeds, as the demo
staff user and as a plain member: each loads, and the browser reports no console error and no
uncaught script error on it (a refused script or style, a failed request, a broken swap).

The pages come from the URL conf, through the URL table of tests/security/routes.py (which
fails when a URL has no row): every URL a browser opens with GET, filled from the seeded rows
as the table fills it, so that a new page is visited without a change here."""

import re
from dataclasses import dataclass
from io import StringIO
from types import SimpleNamespace

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import resolve, reverse
from playwright.sync_api import expect

from agents.context.models import Agent
from agents.context.services import checkpoint_create
from agents.demo import DEMO_AGENT
from agents.graphs.models import Graph
from memory import selectors
from memory.models import Node, Search
from memory.services.demo import DEMO_PROJECT
from memsite.celery import app
from memsite.demo import DEMO_PASSWORD, DEMO_USERNAME
from memsite.llm.models import LLMCall
from memsite.spaces import services as space_services
from memsite.spaces.logic import Role, role_allows, role_needed
from memsite.spaces.selectors import membership_role
from tests.factories import UserFactory, default_space
from tests.security.routes import API, ROUTES, is_admin, site_patterns

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("memory_roots", "offline_llm"),
]


def node_at(path: str) -> Node:
    return selectors.node_resolve(space=default_space(), path=path)


@pytest.fixture
def demo(settings) -> dict[str, object]:
    """What `make run` seeds (its commands, with DEBUG on as it has it), the work they queue run
    at once by the offline provider: the rows the URL table's pages are filled from, under the
    names the table reads them by (tests/security/world.py)."""
    settings.MEMSITE_EMBEDDINGS = "off"  # full text alone: no model to load
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.DEBUG = True
    try:
        call_command("seed_demo", stdout=StringIO())
        call_command("seed_demo_agents", stdout=StringIO())
    finally:
        settings.DEBUG = False  # pages render as in production, Content-Security-Policy included
        app.conf.task_always_eager = eager
    agent = Agent.objects.get(name=DEMO_AGENT)
    return {
        "agent": agent,
        "checkpoint": checkpoint_create(agent=agent),
        "graph": Graph.objects.get(agent=agent),
        "folder": node_at("/references"),
        "document": node_at("/references/http-status-codes.md"),
        "project": node_at(f"/projects/{DEMO_PROJECT}"),
        "search": Search.objects.get(),
        "llm_call": LLMCall.objects.order_by("pk").first(),
    }


@dataclass(frozen=True)
class Visitor:
    username: str
    password: str
    rows: SimpleNamespace  # the seeded rows, and the visitor as `user` with their token's key


def visitor(user, password: str, demo: dict[str, object]) -> Visitor:
    key = space_services.token_create(member=user, space=default_space(), name="swarm node a").key
    return Visitor(username=user.username, password=password, rows=SimpleNamespace(**demo, user=user, user_token=key))


def pages(who: Visitor, role: Role, staff: bool) -> list[str]:
    """Every URL a browser opens (a GET that is no htmx partial) that `role` may open."""
    urls = []
    for pattern in site_patterns():
        if is_admin(pattern):
            continue
        row = ROUTES[pattern.route]
        get = row.calls.get("GET")
        if row.kind == API or get is None or get.htmx or not role_allows(role, role_needed("GET", get.role)):
            continue
        urls.append(reverse(pattern.name, kwargs=row.kwargs(who.rows)))
    # A node of each other type on its page; the admin's pages, for staff.
    for path in ("/user", f"/projects/{DEMO_PROJECT}", f"/projects/{DEMO_PROJECT}/todo_api/app.py"):
        urls.append(reverse("memory:node_detail", args=[node_at(path).pk]))
    if staff:
        urls += [reverse("admin:index"), reverse("admin:memory_node_changelist")]
        urls.append(reverse("admin:memory_node_change", args=[quote(who.rows.document.pk)]))
    return urls


def log_in(page, live_server, who: Visitor) -> None:
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(who.username)
    page.get_by_label("Password").fill(who.password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/")


RENDERED = re.compile(r"text/html|application/json|image/")  # what the browser shows, not downloads


def problems_on(page, live_server, urls: list[str]) -> dict[str, list[str]]:
    """What went wrong on each page: its console's errors, its uncaught errors, a status other
    than 200."""
    reported: list[str] = []
    page.on("console", lambda message: reported.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: reported.append(f"uncaught: {error}"))
    problems = {}
    for url in urls:
        reported.clear()
        probe = page.request.get(f"{live_server.url}{url}")
        if probe.status == 200 and not RENDERED.match(probe.headers.get("content-type", "")):
            continue  # a download (an archive, the schema): nothing for the browser to render
        response = page.goto(f"{live_server.url}{url}", wait_until="load")
        page.wait_for_load_state("networkidle")  # what htmx loads at once is in
        found = reported + ([f"status {response.status}"] if response.status != 200 else [])
        if found:
            problems[url] = list(found)
    return problems


# Pages of every kind the table must have given, lest it give none: the check checks something.
KINDS = {
    "home",
    "memory:node_detail",
    "memory:search_detail",
    "agents:agent_detail",
    "agents:brain_detail",
    "agents:graph_detail",
    "spaces:token_revoke",
    "llm:ledger",
    "llm:call",
    "spaces:space_list",
    "admin:index",
}


def test_every_page_as_the_demo_staff_user(page, live_server, demo):
    who = visitor(get_user_model().objects.get(username=DEMO_USERNAME), DEMO_PASSWORD, demo)
    urls = pages(who, Role.OWNER, staff=True)
    assert KINDS <= {resolve(url).view_name for url in urls}
    log_in(page, live_server, who)
    assert problems_on(page, live_server, urls) == {}


def test_every_page_as_a_member(page, live_server, demo):
    member = UserFactory()
    assert membership_role(member=member, space_id=default_space().pk) == Role.EDITOR
    who = visitor(member, "password", demo)
    urls = pages(who, Role.EDITOR, staff=False)
    seen = {resolve(url).view_name for url in urls}
    assert KINDS - {"admin:index"} <= seen and "spaces:space_settings" not in seen  # the staff's, an owner's
    log_in(page, live_server, who)
    assert problems_on(page, live_server, urls) == {}
