"""The dashboard on a laptop's screen (1280 px) for a staff user with two spaces, the widest top
bar there is: the navigation keeps to one line or folds behind its menu, and cards hold their
tables, buttons and labels without breaking a word or running past their edge."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agents.brains.services.brains import brain_writing, goal_create
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set
from tests.browser.conftest import ARTIFACTS
from tests.factories import AgentFactory, StaffFactory, default_space
from tests.llm.factories import make_call

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

LONG_LABEL = "/swarmstar/nodes/a-rather-long-node-name/deployment-notes-for-the-payments-service.md"


@pytest.fixture
def laptop(page, live_server):
    staff = StaffFactory(username="ada", role=Role.OWNER)
    membership_set(space=Space.objects.create(slug="lab", name="Lab"), member=staff, role=Role.OWNER)
    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/")
    return page


def agent_with_a_goal_and_long_neurons() -> int:
    agent = AgentFactory(name="scout", model="gpt-4")
    goal_create(agent=agent, text="Learn what /references holds about deployments")
    with brain_writing(agent=agent) as brain:
        brain.neurons([("path", LONG_LABEL, 1.0), ("path", LONG_LABEL.replace("a-", "b-"), 0.5)], at=timezone.now())
    return agent.pk


def fits_its_card(page, selector: str) -> bool:
    return page.evaluate(
        """(selector) => {
            const element = document.querySelector(selector);
            const card = element.closest('.card');
            return element.getBoundingClientRect().right <= card.getBoundingClientRect().right + 0.5
                && card.scrollWidth <= card.clientWidth + 0.5;
        }""",
        selector,
    )


def line_count(page, selector: str) -> float:
    """How many lines of text the element takes, by its height over its line height."""
    return page.evaluate(
        """(selector) => {
            const element = document.querySelector(selector);
            const style = getComputedStyle(element);
            const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
            return element.getBoundingClientRect().height / line;
        }""",
        selector,
    )


def test_the_top_bar_keeps_to_one_row_on_every_page(laptop, live_server):
    errors = []
    laptop.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    for path in ("/", "/llm/", "/spaces/", f"/spaces/{default_space().slug}/settings/", "/memory/"):
        laptop.goto(f"{live_server.url}{path}")
        laptop.wait_for_load_state("networkidle")
        links = laptop.get_by_role("navigation", name="Main").get_by_role("link")
        tops = {round(box["y"]) for box in (links.nth(i).bounding_box() for i in range(links.count())) if box}
        assert len(tops) <= 1, (path, tops)  # one row of links, or none shown (folded)
        assert laptop.locator(".topbar").bounding_box()["height"] < 70, path
    laptop.screenshot(path=str(ARTIFACTS / "laptop-space-settings.png"), full_page=True)
    assert errors == []  # the new space form's slug pattern among them


def test_a_folded_navigation_opens_from_its_menu(laptop):
    menu = laptop.get_by_role("button", name="Menu")
    if menu.is_visible():
        menu.click()
    expect(laptop.get_by_role("navigation", name="Main").get_by_role("link", name="Admin")).to_be_visible()


def test_the_brain_page_keeps_its_goal_button_and_neurons_in_their_cards(laptop, live_server):
    laptop.goto(f"{live_server.url}/agents/{agent_with_a_goal_and_long_neurons()}/brain/")
    assert line_count(laptop, ".goal .link-button") < 1.5
    assert fits_its_card(laptop, "table.neurons")
    laptop.screenshot(path=str(ARTIFACTS / "laptop-brain.png"), full_page=True)


def test_the_ledger_shows_every_total(laptop, live_server):
    make_call(model="gpt-4o-mini-2024-07-18")
    laptop.goto(f"{live_server.url}/llm/")
    assert fits_its_card(laptop, "table.llm-totals")
    expect(laptop.locator("table.llm-totals th", has_text="cost (USD)")).to_be_in_viewport()


def test_the_delete_confirmation_reads_as_one_line(laptop, live_server):
    laptop.goto(f"{live_server.url}/spaces/{default_space().slug}/settings/")
    assert line_count(laptop, "#delete-space label > span") < 1.5
