"""Spaces in a real browser: switch the space the dashboard acts in from the top bar, make a
token and see its key once, and the top bar at a phone's width."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from memsite.spaces.services import space_create
from tests.browser.test_dashboard import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]


def test_switch_space_from_the_top_bar_and_make_a_token(page, live_server, screenshot):
    log_in(page, live_server)
    space_create(user=get_user_model().objects.get(username="ada"), slug="lab", name="The Lab")
    page.goto(f"{live_server.url}/agents/")
    current = page.locator(".topbar .space-current")
    expect(current).to_have_text("Default")

    switcher = page.locator(".topbar form.space-switch")
    switcher.get_by_label("Switch to the space").select_option("lab")
    switcher.get_by_role("button", name="Switch").click()
    expect(page).to_have_url(f"{live_server.url}/agents/")
    expect(current).to_have_text("The Lab")
    screenshot("spaces-01-switched")

    menu = page.get_by_role("button", name="Menu")
    if menu.is_visible():  # two spaces' switcher leaves the navigation no room on one line
        menu.click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Spaces").click()
    expect(page.locator("#space-lab")).to_contain_text("owner")
    page.locator("#space-lab").get_by_role("link", name="Tokens").click()
    expect(page).to_have_url(f"{live_server.url}/spaces/lab/tokens/")
    form = page.locator("#create-token form")
    form.get_by_label("Name").fill("swarm node b")
    form.get_by_label("Expires in days").fill("30")
    form.get_by_role("button", name="Make the token").click()
    key = page.locator("#new-key")
    expect(key).to_have_text(re.compile(r"^ms_\S{20,}$"))
    expect(page.locator(".new-token")).to_contain_text("It will not be shown again")
    shown = key.inner_text()
    screenshot("spaces-02-token-made")

    page.goto(f"{live_server.url}/spaces/lab/tokens/")
    expect(page.locator("#new-key")).to_have_count(0)
    expect(page.locator("table.tokens")).to_contain_text("swarm node b")
    assert shown not in page.content()


def test_the_top_bar_fits_a_phone(page, live_server, screenshot):
    log_in(page, live_server)
    space_create(user=get_user_model().objects.get(username="ada"), slug="lab", name="A space with a long name")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/spaces/")
    expect(page.locator(".topbar .space-current")).to_be_visible()
    expect(page.locator(".topbar form.space-switch button")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot("spaces-03-phone")
