"""The dashboard's changes to agents: every setting on create and edit, with the service's
refusals beside their fields; deleting after a page that counts what goes; checkpoints saved
and restored after a page that says what changes; and the assembled messages, tier by tier."""

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from agents.context import services
from agents.context.forms import settings_initial
from agents.context.logic import sent
from agents.context.models import Agent, Checkpoint, Message
from memsite.spaces.logic import Role
from memsite.spaces.services import space_create
from tests.agents.context.services.test_agents import agent_with_everything
from tests.factories import AgentFactory, UserFactory

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def edit_url(agent: Agent) -> str:
    return reverse("agents:agent_edit", args=[agent.pk])


def page_url(agent: Agent) -> str:
    return reverse("agents:agent_detail", args=[agent.pk])


def edit_form(agent: Agent, **changes: object) -> dict:
    """The edit form as its page fills it, with `changes` typed in."""
    values = {**settings_initial(Agent.objects.get(pk=agent.pk)), **changes}
    return {name: "" if value is None else value for name, value in values.items()}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<span class="field-error" id="error-{field}">([^<]*)</span>', html)
    return match.group(1) if match else ""


@pytest.fixture
def reader_client(client: Client) -> Client:
    client.force_login(UserFactory(role=Role.READER))
    return client


FULL = {
    "name": "concierge",
    "model": "gpt-4o",
    "instructions": "Greet ${guest} in $language.",
    "context_variables": '{"guest": "Ada", "language": "French", "room": 12}',
    "strategy": "sliding_window",
    "window_turns": "6",
    "reserved_output_tokens": "1000",
    "turn_input_limit": "8000",
    "conversation_token_budget": "200000",
    "warning_threshold": "0.7",
    "compaction_trigger": "0.85",
    "compaction_target": "0.5",
}


# -- creating ----------------------------------------------------------------------------------


def test_creating_takes_every_setting_and_templated_instructions(user_client):
    response = user_client.post(reverse("agents:agent_create"), FULL)

    agent = Agent.objects.get(name="concierge")
    assert response.status_code == 302 and response["Location"] == page_url(agent)
    assert agent.context_variables == {"guest": "Ada", "language": "French", "room": 12}
    assert (agent.strategy, agent.window_turns, agent.reserved_output_tokens) == ("sliding_window", 6, 1000)
    assert (agent.turn_input_limit, agent.conversation_token_budget) == (8000, 200_000)
    assert (agent.warning_threshold, agent.compaction_trigger, agent.compaction_target) == (0.7, 0.85, 0.5)
    html = user_client.get(page_url(agent)).content.decode()
    assert '<pre class="code sent-content">Greet Ada in French.</pre>' in html


def test_creating_with_only_a_name_and_model_takes_the_defaults(user_client):
    user_client.post(reverse("agents:agent_create"), {"name": "plain", "model": "gpt-4"})

    agent = Agent.objects.get(name="plain")
    assert (agent.strategy, agent.window_turns, agent.compaction_target, agent.context_variables) == (
        "fifo",
        20,
        0.6,
        {},
    )


@pytest.mark.parametrize(
    "changes, field, error",
    [
        ({"context_variables": '{"guest": "Ada",}'}, "context_variables", "This is not valid JSON: Expecting"),
        ({"context_variables": '["Ada"]'}, "context_variables", "context_variables must be an object."),
        ({"context_variables": "[" * 100_000 + "]" * 100_000}, "context_variables", "This JSON is nested too deeply."),
        ({"context_variables": '{"n": ' + "1" * 5_000 + "}"}, "context_variables", "This is not valid JSON: Exceeds"),
        ({"context_variables": '{"guest": "Ada"}'}, "instructions", "instructions use $language, which the"),
        ({"compaction_target": "0.9"}, "compaction_target", "compaction_target (0.9) must be below"),
        ({"window_turns": "0"}, "window_turns", "window_turns must be an integer from 1"),
        ({"warning_threshold": "1.5"}, "warning_threshold", "warning_threshold must be a number above 0"),
        ({"turn_input_limit": "many"}, "turn_input_limit", "Enter a whole number."),
        ({"strategy": "newest"}, "strategy", "Select a valid choice."),
    ],
)
def test_a_refused_setting_is_shown_beside_its_field_and_nothing_is_saved(user_client, changes, field, error):
    response = user_client.post(reverse("agents:agent_create"), {**FULL, **changes})

    assert response.status_code == 400
    html = response.content.decode()
    assert field_error(html, field).startswith(error.replace("'", "&#x27;").replace('"', "&quot;"))
    assert 'class="alert alert-error"' in html
    assert "Greet ${guest} in $language.</textarea>" in html  # what was typed stays
    assert not Agent.objects.exists()


def test_a_taken_name_is_shown_beside_the_name(user_client):
    AgentFactory(name="concierge")

    response = user_client.post(reverse("agents:agent_create"), FULL)

    assert response.status_code == 409
    assert field_error(response.content.decode(), "name") == "There is already an agent named &#x27;concierge&#x27;."


# -- editing -----------------------------------------------------------------------------------


def test_the_edit_form_shows_every_setting_with_the_variables_as_json(user_client):
    agent = AgentFactory(instructions="Hi $who.", context_variables={"who": "Ada"}, turn_input_limit=900)

    html = user_client.get(edit_url(agent)).content.decode()

    assert "Hi $who.</textarea>" in html
    assert "{\n  &quot;who&quot;: &quot;Ada&quot;\n}</textarea>" in html
    assert 'name="turn_input_limit" value="900"' in html
    assert 'name="conversation_token_budget"' in html and 'type="hidden" name="updated_at"' in html


def test_editing_saves_every_setting_and_clears_a_budget(user_client):
    agent = AgentFactory(turn_input_limit=900, conversation_token_budget=5000)

    response = user_client.post(
        edit_url(agent),
        edit_form(
            agent,
            name="renamed",
            instructions="Use $tone.",
            context_variables='{"tone": "calm"}',
            strategy="importance",
            turn_input_limit="",
            compaction_trigger="0.95",
            compaction_target="0.7",
        ),
    )

    assert response.status_code == 302 and response["Location"] == page_url(agent) + "#settings"
    agent.refresh_from_db()
    assert (agent.name, agent.instructions, agent.context_variables) == ("renamed", "Use $tone.", {"tone": "calm"})
    assert (agent.strategy, agent.turn_input_limit, agent.conversation_token_budget) == ("importance", None, 5000)
    assert (agent.compaction_trigger, agent.compaction_target) == (0.95, 0.7)
    assert "Saved the settings of &#x27;renamed&#x27;." in user_client.get(response["Location"]).content.decode()


def test_an_edit_of_settings_changed_since_they_were_read_is_a_conflict(user_client):
    agent = AgentFactory(model="gpt-4")
    stale = edit_form(agent, model="gpt-4o")
    services.agent_update(agent=agent, changes={"instructions": "Changed meanwhile."})

    response = user_client.post(edit_url(agent), stale)

    assert response.status_code == 409
    assert "after these settings were read" in response.content.decode()
    agent.refresh_from_db()
    assert (agent.model, agent.instructions) == ("gpt-4", "Changed meanwhile.")


def test_an_edit_refused_by_the_service_keeps_what_was_typed(user_client):
    agent = AgentFactory(instructions="Plain.")

    response = user_client.post(edit_url(agent), edit_form(agent, instructions="Hi $nobody.", model="gpt-4o"))

    assert response.status_code == 400
    html = response.content.decode()
    assert field_error(html, "instructions").startswith("instructions use $nobody")
    assert "Hi $nobody.</textarea>" in html and 'value="gpt-4o"' in html
    assert Agent.objects.get(pk=agent.pk).instructions == "Plain."


def test_an_edit_without_the_time_read_is_refused(user_client):
    agent = AgentFactory()
    form = edit_form(agent, model="gpt-4o")
    form["updated_at"] = "yesterday"

    response = user_client.post(edit_url(agent), form)

    assert response.status_code == 400 and "reload the page" in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).model == "gpt-4"


# -- readers -----------------------------------------------------------------------------------


def test_a_reader_sees_the_agent_without_the_controls_and_is_refused_the_changes(reader_client):
    agent = AgentFactory()
    services.checkpoint_create(agent=agent)
    checkpoint = Checkpoint.objects.get()

    html = reader_client.get(page_url(agent)).content.decode()
    listing = reader_client.get(reverse("agents:agent_list")).content.decode()

    assert "<h1>" in html and 'id="edit-link"' not in html and 'id="delete-link"' not in html
    assert 'id="checkpoint-create"' not in html and "Restore&hellip;" not in html
    assert 'id="create-agent"' not in listing
    restore = reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk])
    for url in (edit_url(agent), reverse("agents:agent_delete", args=[agent.pk]), restore):
        assert reader_client.get(url).status_code == 403
        assert reader_client.post(url, {}).status_code == 403
    assert reader_client.post(reverse("agents:checkpoint_create", args=[agent.pk])).status_code == 403
    assert Agent.objects.filter(pk=agent.pk).exists() and Checkpoint.objects.count() == 1


def test_an_editor_sees_the_controls(user_client):
    agent = AgentFactory()

    html = user_client.get(page_url(agent)).content.decode()

    assert f'href="{edit_url(agent)}" id="edit-link"' in html and 'id="delete-link"' in html
    assert 'id="checkpoint-create"' in html


# -- deleting ----------------------------------------------------------------------------------


def test_the_delete_page_counts_what_goes_and_what_stays(user_client):
    agent = agent_with_everything()

    html = user_client.get(reverse("agents:agent_delete", args=[agent.pk])).content.decode()

    assert "<strong>3</strong> messages" in html and "<strong>1</strong> checkpoint</li>" in html
    assert "<strong>1</strong> conversation summary</li>" in html and "<strong>1</strong> goal</li>" in html
    assert "<strong>1</strong> brain</li>" in html and "brain records" in html
    assert re.search(r'id="unlinked">These stay, no longer linked to it: <strong>1</strong> reasoning graph\.', html)
    assert Agent.objects.filter(pk=agent.pk).exists() and Message.objects.count() == 3


def test_deleting_goes_to_the_list_and_says_what_went(user_client):
    agent = agent_with_everything()
    name = agent.name

    response = user_client.post(reverse("agents:agent_delete", args=[agent.pk]))

    assert response.status_code == 302 and response["Location"] == reverse("agents:agent_list")
    assert not Agent.objects.exists() and not Message.objects.exists()
    html = user_client.get(response["Location"]).content.decode()
    assert f"Deleted agent &#x27;{name}&#x27; with 3 messages, 1 checkpoint" in html
    assert user_client.get(page_url(agent)).status_code == 404


def test_deleting_an_agent_of_another_space_is_not_found(user_client):
    lab = space_create(slug="lab", name="Lab", user=UserFactory())
    agent = AgentFactory(space=lab)

    assert user_client.get(reverse("agents:agent_delete", args=[agent.pk])).status_code == 404
    assert user_client.post(reverse("agents:agent_delete", args=[agent.pk])).status_code == 404
    assert Agent.objects.filter(pk=agent.pk).exists()


# -- checkpoints -------------------------------------------------------------------------------


def test_saving_a_checkpoint_lists_it(user_client):
    agent = AgentFactory()
    services.message_append(agent=agent, role="user", content="one")

    response = user_client.post(reverse("agents:checkpoint_create", args=[agent.pk]))

    assert response.status_code == 302 and response["Location"] == page_url(agent) + "#checkpoints"
    checkpoint = Checkpoint.objects.get(agent=agent)
    html = user_client.get(page_url(agent)).content.decode()
    assert "Saved checkpoint 1: the settings and 1 message." in html
    restore = reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk])
    assert '<tr id="checkpoint-1"><td>1</td><td>1</td>' in html and f'href="{restore}"' in html


def test_the_restore_page_says_what_changes_and_changes_nothing(user_client):
    agent = AgentFactory(model="gpt-4", context_variables={"secret": "kept-out"})
    services.message_append(agent=agent, role="user", content="one")
    checkpoint = services.checkpoint_create(agent=agent)
    services.message_append(agent=agent, role="user", content="two")
    services.agent_update(agent=agent, changes={"model": "gpt-4o", "context_variables": {"secret": "other"}})

    html = user_client.get(reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk])).content.decode()

    assert "its <strong>2</strong> messages now are replaced by the checkpoint's <strong>1</strong>" in html
    assert "<tr><td><code>model</code></td><td>gpt-4o</td><td>gpt-4</td></tr>" in html
    assert "<code>context_variables</code></td><td>(values hidden)</td><td>different values</td>" in html
    assert "kept-out" not in html and "other" not in html.split('id="restore-checkpoint"')[1]
    assert Agent.objects.get(pk=agent.pk).message_count == 2


def test_restoring_puts_the_checkpoint_back(user_client):
    agent = AgentFactory(model="gpt-4")
    services.message_append(agent=agent, role="user", content="one")
    checkpoint = services.checkpoint_create(agent=agent)
    services.message_append(agent=agent, role="user", content="two")
    services.agent_update(agent=agent, changes={"model": "gpt-4o"})

    response = user_client.post(reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk]))

    assert response.status_code == 302 and response["Location"] == page_url(agent)
    agent.refresh_from_db()
    assert (agent.model, agent.message_count) == ("gpt-4", 1)
    assert list(Message.objects.values_list("content", flat=True)) == ["one"]
    assert "Restored checkpoint 1: 1 message and its settings." in user_client.get(page_url(agent)).content.decode()


def test_another_agents_checkpoint_is_not_found(user_client):
    agent, other = AgentFactory(), AgentFactory()
    checkpoint = services.checkpoint_create(agent=other)
    url = reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk])

    assert user_client.get(url).status_code == 404
    assert user_client.post(url).status_code == 404


def test_an_unreadable_checkpoint_is_a_message_and_changes_nothing(user_client):
    agent = AgentFactory()
    services.message_append(agent=agent, role="user", content="one")
    checkpoint = services.checkpoint_create(agent=agent)
    Checkpoint.objects.filter(pk=checkpoint.pk).update(document={"format": 99})

    response = user_client.post(reverse("agents:checkpoint_restore", args=[agent.pk, checkpoint.pk]))

    assert response.status_code == 400 and "is not a format 1 document" in response.content.decode()
    assert Message.objects.filter(agent=agent).count() == 1


# -- the messages as sent ----------------------------------------------------------------------


def test_the_messages_as_sent_are_shown_tier_by_tier_and_escaped(user_client):
    agent = AgentFactory(instructions="Serve $who.", context_variables={"who": SCRIPT})
    services.message_append(agent=agent, role="user", content="Remember this.", pinned=True)
    services.message_append(agent=agent, role="user", content=SCRIPT)
    services.message_append(agent=agent, role="assistant", content="Done.")

    html = user_client.get(page_url(agent)).content.decode()

    section = html.split('id="sent-messages"')[1].split("</section>")[0]
    assert re.findall(r'<div class="sent-tier" data-tier="([a-z_]+)">', section) == ["system", "pinned", "short_term"]
    assert f'<pre class="code sent-content">Serve {ESCAPED}.</pre>' in section
    assert "Remember this." in section and f'<pre class="code sent-content">{ESCAPED}</pre>' in section
    assert SCRIPT not in html
    assert 'conversation <span class="muted">· 2 messages' in section


def test_a_long_context_shows_only_its_ends(user_client, monkeypatch):
    monkeypatch.setattr(sent, "MAX_SHOWN_MESSAGES", 5)
    monkeypatch.setattr(sent, "SHOWN_FIRST", 2)
    agent = AgentFactory(instructions="Count.")
    for number in range(1, 11):
        services.message_append(agent=agent, role="user", content=f"number {number}")

    html = user_client.get(page_url(agent)).content.decode()

    assert "… 6 messages not shown …" in html
    assert re.findall(r'id="sent-(\d+)"', html) == ["1", "2", "9", "10", "11"]


def test_the_context_partial_carries_the_messages_for_another_strategy(user_client):
    agent = AgentFactory(instructions="Count.", window_turns=1)
    for number in range(1, 4):
        services.message_append(agent=agent, role="user", content=f"number {number}")

    html = user_client.get(
        reverse("agents:agent_context", args=[agent.pk]) + "?strategy=sliding_window", HTTP_HX_REQUEST="true"
    ).content.decode()

    assert "number 3" in html.split('id="sent-messages"')[1] and "number 1" not in html.split('id="sent-messages"')[1]


def test_variables_json_round_trips_through_the_form(user_client):
    values = {"nested": {"list": [1, 2.5, None, True]}, "text": "é ünïcode"}
    agent = AgentFactory(context_variables=values)

    response = user_client.post(edit_url(agent), edit_form(agent, context_variables=json.dumps(values, indent=2)))

    assert response.status_code == 302
    assert Agent.objects.get(pk=agent.pk).context_variables == values
