"""Every main dashboard page on a phone-sized screen (390 px wide): nothing runs past the right
edge, and the navigation folds behind a menu button that opens it with every link visible."""

import re
from collections.abc import Iterator

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agents.brains.services.brains import brain_writing, goal_create
from memory import selectors
from memory.models import Search, SearchQuestion
from memsite.spaces.logic import Role
from memsite.spaces.services import token_create
from tests.browser.conftest import ARTIFACTS
from tests.factories import (
    AgentFactory,
    DocumentFactory,
    GraphFactory,
    SearchFactory,
    SearchStepFactory,
    UserFactory,
    default_space,
)
from tests.llm.factories import make_call

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

WIDTH = 390
NAV_LINKS = ["Home", "Memory", "User preferences", "Searches", "Questions", "Agents", "Graphs", "LLM calls", "Spaces"]


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None


@pytest.fixture
def phone(chromium_browser) -> Iterator:
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": 844})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def world() -> dict[str, str]:
    """A space with something on every page, and the paths of those pages."""
    space = default_space()
    notes = DocumentFactory(
        name="a-rather-long-document-name-about-deployment-notes.md",
        parent=selectors.node_internal_folder(space=space, name="user"),
        content=b"# Deployment\n\nThe service listens on port 8080 behind nginx.\n",
    )
    search = SearchFactory(questions=["Where are the deployment notes kept, and who wrote them?"])
    SearchStepFactory(search=search, node=notes)
    waiting = SearchFactory(status=Search.Status.WAITING, fallback="ask_user", questions=["Which port?"])
    SearchQuestion.objects.create(search=waiting, questions=["Which port does the service listen on?"])
    agent = AgentFactory(name="scout", model="gpt-4")
    with brain_writing(agent=agent) as brain:
        brain.record(kind="thought", text="The notes folder holds deployment facts.", item={}, at=timezone.now())
        brain.set(plan=["list /user", "read the notes"], plan_step=1, self_summary="I read notes.")
    goal_create(agent=agent, text="learn where the service runs")
    graph = GraphFactory(task="Find the port the deployment notes name, and the host it runs on")
    call = make_call(served=search, model="gpt-4o-mini-2024-07-18")
    node_token = token_create(member=UserFactory(), space=space, name="swarm node with a rather long name b").token
    slug = space.slug
    return {
        "home": "/",
        "memory": "/memory/",
        "node": f"/memory/{notes.pk}/",
        "searches": "/searches/",
        "search": f"/searches/{search.pk}/",
        "questions": "/questions/",
        "agents": "/agents/",
        "agent": f"/agents/{agent.pk}/",
        "brain": f"/agents/{agent.pk}/brain/",
        "graphs": "/graphs/",
        "graph": f"/graphs/{graph.pk}/",
        "llm": "/llm/",
        "llm-call": f"/llm/calls/{call.pk}/",
        "spaces": "/spaces/",
        "members": f"/spaces/{slug}/members/",
        "tokens": f"/spaces/{slug}/tokens/",
        "token-revoke": f"/spaces/{slug}/tokens/{node_token.pk}/revoke/",
        "space-settings": f"/spaces/{slug}/settings/",
        "preferences": "/user/preferences/",
    }


def log_in(page, live_server) -> None:
    UserFactory(username="ada", role=Role.OWNER)
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/")


def overflow(page) -> list[str]:
    """What sticks out past the right edge: the widest elements, for the failure message."""
    return page.evaluate(
        """(width) => [...document.querySelectorAll('body *')]
            .filter((el) => el.getBoundingClientRect().right > width + 0.5)
            .slice(0, 5)
            .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)""",
        WIDTH,
    )


def test_every_page_fits_a_phone_and_its_menu_opens(phone, live_server):
    pages = world()
    log_in(phone, live_server)
    out = ARTIFACTS / "narrow"
    out.mkdir(parents=True, exist_ok=True)
    too_wide = {}
    for name, path in pages.items():
        phone.goto(f"{live_server.url}{path}")
        phone.wait_for_load_state("networkidle")
        width = phone.evaluate("document.documentElement.scrollWidth")
        if width > WIDTH:
            too_wide[name] = (width, overflow(phone))
        phone.screenshot(path=str(out / f"{name}.png"), full_page=True)
        menu = phone.get_by_role("button", name="Menu")
        expect(menu).to_be_visible()
        nav = phone.get_by_role("navigation", name="Main")
        expect(nav).to_be_hidden()
        menu.click()
        expect(menu).to_have_attribute("aria-expanded", "true")
        for link in NAV_LINKS:
            expect(nav.get_by_role("link", name=re.compile(rf"^{link}\b"))).to_be_visible()
        if (opened := phone.evaluate("document.documentElement.scrollWidth")) > WIDTH:
            too_wide[f"{name}, menu open"] = (opened, overflow(phone))
        if name == "home":
            phone.screenshot(path=str(out / "home-menu-open.png"), full_page=True)
    assert too_wide == {}


def boxes_overlap(first: dict, second: dict) -> bool:
    return not (
        first["x"] + first["width"] <= second["x"]
        or second["x"] + second["width"] <= first["x"]
        or first["y"] + first["height"] <= second["y"]
        or second["y"] + second["height"] <= first["y"]
    )


def test_a_wide_screen_shows_the_navigation_and_apart_marker_labels(page, live_server):
    pages = world()
    log_in(page, live_server)
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Home")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.screenshot(path=str(ARTIFACTS / "wide-home.png"), full_page=True)
    page.goto(f"{live_server.url}{pages['agent']}")
    labels = page.locator(".context-marker-label")
    expect(labels).to_have_count(3)  # the warning, the compaction trigger and its target
    boxes = [labels.nth(index).bounding_box() for index in range(3)]
    assert not any(boxes_overlap(boxes[i], boxes[j]) for i in range(3) for j in range(i + 1, 3)), boxes
    page.screenshot(path=str(ARTIFACTS / "wide-agent.png"), full_page=True)
