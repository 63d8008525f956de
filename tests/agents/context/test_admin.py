import pytest
from django.urls import reverse

from agents.context import services as context_services
from agents.context.models import Agent, Checkpoint, Message, Summary
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set
from tests.agents.support import say
from tests.factories import AgentFactory, staff_with

pytestmark = pytest.mark.django_db

SECRET = "hunter2-do-not-show"


def agent_with_history(name: str, messages: int = 3, checkpoints: int = 1) -> Agent:
    agent = AgentFactory(name=name, model="gpt-4", instructions="Use $key.", context_variables={"key": SECRET})
    for _ in range(messages):
        say(agent, 10)
    for _ in range(checkpoints):
        context_services.checkpoint_create(agent=agent)
    return agent


def settings_form(agent: Agent, **changes) -> dict:
    """What the agent's change form posts, with `changes`."""
    values = {
        "name": agent.name,
        "model": agent.model,
        "instructions": agent.instructions,
        "strategy": agent.strategy,
        "window_turns": agent.window_turns,
        "reserved_output_tokens": agent.reserved_output_tokens,
        "turn_input_limit": agent.turn_input_limit or "",
        "conversation_token_budget": agent.conversation_token_budget or "",
        "warning_threshold": agent.warning_threshold,
        "compaction_trigger": agent.compaction_trigger,
        "compaction_target": agent.compaction_target,
    }
    return {**values, **changes}


@pytest.mark.parametrize("model", ["agent", "message", "checkpoint"])
def test_the_changelists_cost_the_same_queries_whatever_the_rows(admin_client, model, django_assert_max_num_queries):
    url = reverse(f"admin:context_{model}_changelist")
    agent_with_history("first")
    with django_assert_max_num_queries(12) as few:
        assert admin_client.get(url).status_code == 200
    for number in range(6):
        agent_with_history(f"more-{number}", messages=4, checkpoints=2)

    with django_assert_max_num_queries(len(few.captured_queries)):
        html = admin_client.get(url).content.decode()

    assert "more-5" in html and SECRET not in html


def test_the_agent_list_shows_counters_and_searches_by_name(admin_client):
    agent_with_history("scout", messages=3, checkpoints=2)
    agent_with_history("keeper", messages=1)
    url = reverse("admin:context_agent_changelist")

    html = admin_client.get(url, {"q": "sco"}).content.decode()

    assert "scout" in html and "keeper" not in html
    assert '<td class="field-message_count">3</td>' in html
    assert '<td class="field-checkpoint_count">2</td>' in html
    assert '<td class="field-conversation_tokens">30</td>' in html


def test_the_agent_form_shows_context_variable_names_not_values(admin_client):
    agent = agent_with_history("scout")

    response = admin_client.get(reverse("admin:context_agent_change", args=[agent.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "key" in html and SECRET not in html
    assert "context_variables" not in response.context["adminform"].form.fields
    assert f"{reverse('admin:context_message_changelist')}?agent__id__exact={agent.pk}" in html


def test_settings_change_through_the_services(admin_client):
    agent = agent_with_history("scout")
    url = reverse("admin:context_agent_change", args=[agent.pk])

    response = admin_client.post(url, settings_form(agent, strategy="importance", turn_input_limit=2000))

    assert response.status_code == 302
    agent.refresh_from_db()
    assert (agent.strategy, agent.turn_input_limit, agent.message_count) == ("importance", 2000, 3)
    assert agent.context_variables == {"key": SECRET}


def test_a_change_the_services_refuse_shows_their_message_and_saves_nothing(admin_client):
    agent = agent_with_history("scout")
    url = reverse("admin:context_agent_change", args=[agent.pk])

    response = admin_client.post(url, settings_form(agent, instructions="Use $missing."), follow=True)

    assert "Instructions use $missing, which the context variables do not define." in response.content.decode()
    agent.refresh_from_db()
    assert agent.instructions == "Use $key."


def test_agents_are_not_added_in_the_admin(admin_client):
    assert admin_client.get(reverse("admin:context_agent_add")).status_code == 403


def test_messages_and_checkpoints_are_read_only(admin_client):
    agent = agent_with_history("scout")
    message = Message.objects.filter(agent=agent).first()
    checkpoint = Checkpoint.objects.get(agent=agent)

    for model, row in (("message", message), ("checkpoint", checkpoint)):
        change_url = reverse(f"admin:context_{model}_change", args=[row.pk])
        response = admin_client.get(change_url)
        assert response.status_code == 200 and response.context["has_change_permission"] is False
        assert SECRET not in response.content.decode()
        assert admin_client.post(change_url, {"content": "changed", "version": 9}).status_code == 403
        assert admin_client.get(reverse(f"admin:context_{model}_add")).status_code == 403
        assert (
            admin_client.post(reverse(f"admin:context_{model}_delete", args=[row.pk]), {"post": "yes"}).status_code
            == 403
        )

    message.refresh_from_db()
    assert message.content == "cat " * 5 + "cat"
    assert Message.objects.filter(agent=agent).count() == 3 and Checkpoint.objects.filter(agent=agent).exists()


def test_the_messages_of_one_agent(admin_client):
    agent_with_history("scout", messages=2)
    other = agent_with_history("keeper", messages=1)

    response = admin_client.get(reverse("admin:context_message_changelist"), {"agent__id__exact": other.pk})

    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == list(Message.objects.filter(agent=other))


def test_deleting_an_agent_takes_its_messages_and_checkpoints(admin_client):
    agent = agent_with_history("scout", messages=3, checkpoints=2)
    keeper = agent_with_history("keeper")
    url = reverse("admin:context_agent_delete", args=[agent.pk])

    confirmation = admin_client.get(url)
    assert confirmation.status_code == 200
    assert not confirmation.context["perms_lacking"]
    counts = dict(confirmation.context["model_count"])
    assert (counts["agents"], counts["messages"], counts["checkpoints"]) == (1, 3, 2)

    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Agent.objects.filter(pk=agent.pk).exists()
    assert not Message.objects.filter(agent_id=agent.pk).exists()
    assert not Checkpoint.objects.filter(agent_id=agent.pk).exists()
    assert Message.objects.filter(agent=keeper).count() == 3


def test_users_without_staff_cannot_open_the_admin(client, user):
    client.force_login(user)
    assert client.get(reverse("admin:context_agent_changelist")).status_code == 302


def test_summaries_are_listed_and_read_only(admin_client):
    agent = agent_with_history("scribe")
    summary = Summary.objects.create(agent=agent, through=2, status=Summary.Status.DONE, content="Two cats.")

    html = admin_client.get(reverse("admin:context_summary_changelist")).content.decode()
    change_url = reverse("admin:context_summary_change", args=[summary.pk])

    assert "scribe" in html and admin_client.get(change_url).context["has_change_permission"] is False
    assert admin_client.post(change_url, {"content": "changed"}).status_code == 403
    summary.refresh_from_db()
    assert summary.content == "Two cats."


def test_a_staff_reader_of_the_agent_s_space_changes_and_deletes_it_not(client):
    """A staff user who owns `default` but only reads `lab`: the agent is judged in `lab`."""
    lab = Space.objects.create(slug="lab", name="Lab")
    person = staff_with(*(f"context.{verb}_agent" for verb in ("view", "change", "delete")))
    membership_set(space=lab, member=person, role=Role.READER)
    client.force_login(person)
    agent = AgentFactory(space=lab, name="theirs")
    url = reverse("admin:context_agent_change", args=[agent.pk])

    assert client.post(url, settings_form(agent, strategy="importance")).status_code == 403
    assert client.post(reverse("admin:context_agent_delete", args=[agent.pk]), {"post": "yes"}).status_code == 403
    agent.refresh_from_db()
    assert agent.strategy != "importance"

    own = AgentFactory(name="ours")  # in `default`, which they own
    response = client.post(
        reverse("admin:context_agent_change", args=[own.pk]), settings_form(own, strategy="importance")
    )
    assert response.status_code == 302
    own.refresh_from_db()
    assert own.strategy == "importance"
