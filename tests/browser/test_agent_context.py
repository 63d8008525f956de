"""An agent's context window in a real browser: switching the strategy redraws the bar without
a reload, and appending a message redraws it again for the strategy chosen."""

import re

import pytest
from playwright.sync_api import expect

from tests.agents.support import say
from tests.factories import AgentFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_switching_the_strategy_redraws_the_bar(page, live_server, screenshot):
    # gpt-4 in a 1,000-token window; four turns of 150 tokens fit, and the sliding window
    # keeps the last two of them.
    agent = AgentFactory(name="scout", model="gpt-4", turn_input_limit=1_000, window_turns=2)
    for _ in range(4):
        say(agent, 100)
        say(agent, 50, role="assistant")
    UserFactory(username="ada")
    agent_url = f"{live_server.url}/agents/{agent.pk}/"

    page.goto(agent_url)
    expect(page).to_have_url(re.compile(r"/login/\?next=/agents/\d+/$"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(agent_url)

    report = page.locator("#context-report")
    conversation = report.locator('.context-legend li[data-tier="short_term"]')
    expect(conversation).to_have_attribute("data-tokens", "600")
    expect(report.locator('.context-bar [data-tier="short_term"]')).to_have_attribute("style", "width: 60.000%")
    expect(report.locator("#nothing-dropped")).to_be_visible()
    screenshot("agent-context-fifo")

    page.get_by_label("Strategy").select_option("sliding_window")
    expect(conversation).to_have_attribute("data-tokens", "300")
    expect(report.locator('.context-bar [data-tier="short_term"]')).to_have_attribute("style", "width: 30.000%")
    expect(report.locator("#context-strategy")).to_have_text("sliding_window")
    expect(report.locator(".context-dropped")).to_contain_text("before the last turns the sliding window keeps")
    expect(page).to_have_url(f"{agent_url}?model=gpt-4&strategy=sliding_window")
    screenshot("agent-context-sliding-window")

    # A new turn moves the window on; the report follows without a reload.
    page.get_by_text("Append a message").click()
    page.get_by_label("Content").fill("What next?")
    page.get_by_role("button", name="Append").click()
    expect(page.locator("#conversation .alert-success")).to_have_text("Appended message 9.")
    expect(page.locator("#messages > li").first).to_contain_text("What next?")
    expect(page.locator("#message-count")).to_have_text("9")
    expect(conversation).not_to_have_attribute("data-tokens", "300")
    expect(page.get_by_label("Strategy")).to_have_value("sliding_window")
    expect(report.locator("#context-strategy")).to_have_text("sliding_window")
