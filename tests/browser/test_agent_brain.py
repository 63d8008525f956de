"""An agent's brain in a real browser: send a chat message and see it and the agent's reply
appear without a reload, then in the agent's conversation; the page shows the charts of the
ticks so far."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agents.brains.models import TickRun
from agents.brains.services.brains import brain_writing, goal_create
from agents.context.models import Message
from tests.factories import AgentFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None


def test_chat_with_the_agent(page, live_server, screenshot):
    agent = AgentFactory(name="scout", model="gpt-4")
    start = timezone.now() - timedelta(minutes=5)
    with brain_writing(agent=agent) as brain:
        brain.record(kind="thought", text="The notes folder holds cat facts.", item={}, at=start)
        brain.record(kind="episode", text="Listed /notes.", item={"type": "list_dir", "where": "/notes"}, at=start)
        brain.set(
            plan=["list /notes", "read a note"], plan_step=1, self_summary="I read notes about cats.", tick_count=2
        )
    goal_create(agent=agent, text="learn about cats")
    for number, joy in enumerate([0.2, 0.6], start=1):
        TickRun.objects.create(
            brain_id=agent.pk,
            number=number,
            status="done",
            emotions={"joy": joy},
            hormones={"dopamine": 0.5},
            ended_at=timezone.now(),
        )
    UserFactory(username="ada")
    brain_url = f"{live_server.url}/agents/{agent.pk}/brain/"

    page.goto(brain_url)
    expect(page).to_have_url(re.compile(r"/login/\?next=/agents/\d+/brain/$"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(brain_url)

    expect(page.locator('#chart-emotions polyline[data-series="joy"]')).to_have_attribute("points", "0,96 480,48")
    expect(page.locator("#plan [aria-current=step]")).to_contain_text("read a note")
    expect(page.locator("#stream-list > li")).to_have_count(2)
    expect(page.locator("#stream")).to_have_attribute("data-settled", "true")
    screenshot("agent-brain")

    page.get_by_label("Message").fill("What have you learnt about cats?")
    page.get_by_role("button", name="Send").click()

    lines = page.locator("#chat-log > li")
    expect(lines).to_have_count(2)
    expect(lines.first).to_contain_text("What have you learnt about cats?")
    expect(lines.nth(1)).to_have_class(re.compile(r"\bchat-assistant\b"))
    reply = Message.objects.get(agent=agent, position=2).content
    expect(lines.nth(1).locator(".chat-text")).to_have_text(reply)
    expect(page.get_by_label("Message")).to_have_value("")
    expect(page).to_have_url(brain_url)
    screenshot("agent-brain-chat")

    # The agent's page shows the same thread, newest first.
    page.locator("#chat").get_by_role("link", name="conversation on the agent's page").click()
    messages = page.locator("#messages > li.message")
    expect(messages).to_have_count(2)
    expect(messages.first.locator(".message-content")).to_have_text(reply)
    expect(messages.nth(1).locator(".message-content")).to_have_text("What have you learnt about cats?")
