"""An agent's settings, deletion and checkpoints in a real browser, as a person sees them:
creating one with context variables and templated instructions, a JSON mistake shown beside
its field, editing, the deletion page's counts, saving and restoring a checkpoint, and the
messages the next call sends, tier by tier. The new pages fit a 390-pixel-wide phone."""

import re

import pytest
from playwright.sync_api import expect

from agents.context import services
from agents.context.models import Agent, Checkpoint
from tests.browser.test_dashboard import log_in
from tests.factories import AgentFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

PHONE = {"width": 390, "height": 844}


def field(page, name: str):
    return page.locator(f'.settings-form [name="{name}"]')


def fits_a_phone(page, url: str) -> None:
    page.set_viewport_size(PHONE)
    page.goto(url)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{url} is {width} pixels wide at {PHONE['width']}"
    page.set_viewport_size({"width": 1280, "height": 860})


def test_create_an_agent_with_variables_and_see_what_it_sends(page, live_server, screenshot):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/agents/")

    field(page, "name").fill("concierge")
    field(page, "model").fill("gpt-4")
    field(page, "instructions").fill("Greet ${guest} in $language.")
    field(page, "context_variables").fill('{"guest": "Ada", "language": "French"')
    field(page, "strategy").select_option("sliding_window")
    field(page, "window_turns").fill("4")
    field(page, "conversation_token_budget").fill("50000")
    screenshot("agent-settings-01-create-form")
    page.get_by_role("button", name="Create").click()

    # The JSON lacks its closing brace: the error is beside the field, and nothing is made.
    expect(page.locator("#error-context_variables")).to_contain_text("This is not valid JSON")
    expect(field(page, "instructions")).to_have_value("Greet ${guest} in $language.")
    assert not Agent.objects.exists()
    screenshot("agent-settings-02-invalid-json")

    field(page, "context_variables").fill('{"guest": "Ada", "language": "French"}')
    page.get_by_role("button", name="Create").click()

    expect(page).to_have_url(re.compile(r"/agents/\d+/$"))
    expect(page.locator(".flash")).to_contain_text("Created agent 'concierge'.")
    agent = Agent.objects.get(name="concierge")
    assert (agent.strategy, agent.window_turns, agent.conversation_token_budget) == ("sliding_window", 4, 50_000)
    system = page.locator('#sent-messages .sent-tier[data-tier="system"]')
    expect(system).to_contain_text("instructions")
    expect(system.locator(".sent-content")).to_have_text("Greet Ada in French.")
    screenshot("agent-settings-03-created")


def test_a_missing_variable_is_shown_beside_the_instructions(page, live_server):
    log_in(page, live_server)
    page.goto(f"{live_server.url}/agents/")

    field(page, "name").fill("forgetful")
    field(page, "model").fill("gpt-4")
    field(page, "instructions").fill("Greet $guest.")
    page.get_by_role("button", name="Create").click()

    expect(page.locator("#error-instructions")).to_contain_text("instructions use $guest")
    assert not Agent.objects.exists()


def test_edit_the_settings(page, live_server, screenshot):
    log_in(page, live_server)
    agent = AgentFactory(name="scout", model="gpt-4", instructions="Be brief.")
    page.goto(f"{live_server.url}/agents/{agent.pk}/")

    page.locator("#edit-link").click()
    expect(page.locator("h1")).to_have_text("Settings of scout")
    field(page, "instructions").fill("Answer $who briefly.")
    field(page, "context_variables").fill('{"who": "the team"}')
    field(page, "compaction_trigger").fill("0.5")
    page.get_by_role("button", name="Save settings").click()

    # The target (0.6) is not below the new trigger: said beside the target, nothing saved.
    expect(page.locator("#error-compaction_target")).to_contain_text("must be below compaction_trigger")
    screenshot("agent-settings-04-edit-refused")
    field(page, "compaction_target").fill("0.4")
    field(page, "turn_input_limit").fill("3000")
    page.get_by_role("button", name="Save settings").click()

    expect(page).to_have_url(f"{live_server.url}/agents/{agent.pk}/#settings")
    expect(page.locator(".flash")).to_contain_text("Saved the settings of 'scout'.")
    expect(page.locator("#settings")).to_contain_text("3000 tokens")
    expect(page.locator("#settings")).to_contain_text("compact from 50% to 40% of the window")
    expect(page.locator('#sent-messages [data-tier="system"] .sent-content')).to_have_text("Answer the team briefly.")
    screenshot("agent-settings-05-edited")


def test_save_and_restore_a_checkpoint(page, live_server, screenshot):
    log_in(page, live_server)
    agent = AgentFactory(name="scout", model="gpt-4")
    services.message_append(agent=agent, role="user", content="The first question.")
    page.goto(f"{live_server.url}/agents/{agent.pk}/")

    page.get_by_role("button", name="Save a checkpoint now").click()
    expect(page.locator(".flash")).to_contain_text("Saved checkpoint 1: the settings and 1 message.")
    expect(page.locator("#checkpoint-1")).to_contain_text("1")

    page.get_by_text("Append a message").click()
    page.get_by_label("Content").fill("A later question.")
    page.get_by_role("button", name="Append").click()
    expect(page.locator("#message-count")).to_have_text("2")

    page.locator("#checkpoint-1").get_by_role("link", name="Restore…").click()
    effects = page.locator("#restore-effects")
    expect(effects).to_contain_text("its 2 messages now are replaced by the checkpoint's 1")
    expect(effects).to_contain_text("keeps its name, its brain and every checkpoint")
    screenshot("agent-settings-06-restore-confirm")
    page.get_by_role("button", name="Restore checkpoint 1").click()

    expect(page).to_have_url(f"{live_server.url}/agents/{agent.pk}/")
    expect(page.locator(".flash")).to_contain_text("Restored checkpoint 1: 1 message and its settings.")
    expect(page.locator("#message-count")).to_have_text("1")
    expect(page.locator("#messages")).not_to_contain_text("A later question.")
    screenshot("agent-settings-07-restored")


def test_delete_an_agent_after_seeing_what_goes(page, live_server, screenshot):
    log_in(page, live_server)
    agent = AgentFactory(name="scout", model="gpt-4")
    for text in ("one", "two"):
        services.message_append(agent=agent, role="user", content=text)
    services.checkpoint_create(agent=agent)
    page.goto(f"{live_server.url}/agents/{agent.pk}/")

    page.locator("#delete-link").click()
    expect(page.locator("h1")).to_have_text("Delete the agent 'scout'?")
    deleted = page.locator("#deleted")
    expect(deleted).to_contain_text("2 messages")
    expect(deleted).to_contain_text("1 checkpoint")
    screenshot("agent-settings-08-delete-confirm")
    page.get_by_role("button", name="Delete the agent").click()

    expect(page).to_have_url(f"{live_server.url}/agents/")
    expect(page.locator(".flash")).to_contain_text("Deleted agent 'scout' with 2 messages, 1 checkpoint.")
    expect(page.locator("table.agents")).not_to_contain_text("scout")
    assert not Agent.objects.exists() and not Checkpoint.objects.exists()
    screenshot("agent-settings-09-deleted")


def test_the_messages_as_sent_tier_by_tier(page, live_server, screenshot):
    log_in(page, live_server)
    agent = AgentFactory(name="scout", model="gpt-4", instructions="Help.")
    services.message_append(agent=agent, role="user", content="Always answer in French.", pinned=True)
    services.message_append(agent=agent, role="user", content="<b>Bonjour</b>")
    services.message_append(agent=agent, role="assistant", content="Salut.")
    page.goto(f"{live_server.url}/agents/{agent.pk}/")

    tiers = page.locator("#sent-messages .sent-tier")
    expect(tiers).to_have_count(3)
    assert [tier.get_attribute("data-tier") for tier in tiers.all()] == ["system", "pinned", "short_term"]
    expect(tiers.nth(1)).to_contain_text("pinned messages · 1 message")
    expect(tiers.nth(2)).to_contain_text("conversation · 2 messages")
    expect(tiers.nth(2).locator(".sent-content").first).to_have_text("<b>Bonjour</b>")  # shown as text
    expect(page.locator("#sent-messages b")).to_have_count(0)
    screenshot("agent-settings-10-messages-as-sent")


def test_the_new_pages_fit_a_phone(page, live_server, screenshot):
    log_in(page, live_server)
    agent = AgentFactory(name="a-rather-long-agent-name-" + "x" * 40, model="gpt-4", instructions="Help.")
    services.message_append(agent=agent, role="user", content="word " * 200)
    checkpoint = services.checkpoint_create(agent=agent)
    services.agent_update(agent=agent, changes={"model": "gpt-4o"})
    base = f"{live_server.url}/agents/{agent.pk}"

    for url in (
        f"{live_server.url}/agents/",
        f"{base}/",
        f"{base}/edit/",
        f"{base}/delete/",
        f"{base}/checkpoints/{checkpoint.pk}/restore/",
    ):
        fits_a_phone(page, url)
    page.set_viewport_size(PHONE)
    page.goto(f"{base}/edit/")
    screenshot("agent-settings-11-edit-phone")
