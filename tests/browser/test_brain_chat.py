"""Chat that remembers, in a real browser: asked about something in memory, the agent's offline
reply quotes it, is marked as heuristic, and links what it cites to the node's page."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_dashboard import log_in
from tests.factories import AgentFactory, DocumentFactory, NodeFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

SESSION = "Bo: good morning.\n\nAna: I moved to Lisbon last spring for the new job.\n\nBo: nice."


@pytest.fixture(autouse=True)
def offline_full_text(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_EMBEDDINGS = "off"


def test_a_reply_about_memory_cites_the_node_and_is_marked_heuristic(page, live_server, screenshot):
    logs = NodeFactory(name="logs", description="Sessions, one per day.")
    session = DocumentFactory(parent=logs, name="session-3", description="Session 3", content=SESSION.encode())
    agent = AgentFactory(name="scout", model="gpt-4")
    log_in(page, live_server)
    page.goto(f"{live_server.url}/agents/{agent.pk}/brain/")

    page.get_by_label("Message").fill("Where did Ana move?")
    page.get_by_role("button", name="Send").click()

    reply = page.locator("#chat-log > li.chat-assistant")
    expect(reply).to_have_count(1)
    expect(reply.locator(".badge-heuristic")).to_have_text("heuristic")
    expect(reply.locator(".chat-text")).to_contain_text("Lisbon")
    cited = reply.locator(".chat-citations a")
    expect(cited).to_have_count(1)
    expect(cited).to_have_text("/swarmstar/logs/session-3")
    expect(cited).to_have_attribute("href", f"/memory/{session.pk}/")
    screenshot("brain-chat-cites-memory")

    cited.click()
    expect(page).to_have_url(re.compile(rf"/memory/{session.pk}/$"))
    expect(page.locator("body")).to_contain_text("Lisbon")
    screenshot("brain-chat-cited-node")
