"""A user's ticks, agents ticking and chats are capped and charged to their daily LLM budget,
through the API, the dashboard and beat alike, and beat queues none in a space whose budget is
spent; an interval shorter than beat's period is refused."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.brains import services
from agents.brains.models import Brain, TickRun
from agents.brains.services.ticks import ASKER_GONE
from agents.context.models import Message
from memory.models import Node
from memsite.errors import InvalidInput
from memsite.llm.models import LLMCall
from memsite.spaces.principals import token_principal
from memsite.spaces.services import membership_remove, space_create, token_create
from tests.factories import AgentFactory, UserFactory, a_member, acting, default_space, system
from tests.fake_openai import Reply
from tests.ledger import assert_every_call_has_a_principal
from tests.llm.factories import make_call
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quotas(settings, offline_llm):
    settings.MEMSITE_QUOTA_TICKS = 2
    settings.MEMSITE_QUOTA_TICKING_AGENTS = 1
    settings.MEMSITE_LLM_DAILY_CALLS = 3
    settings.MEMSITE_TICK_MIN_INTERVAL_S = 10
    return settings


@pytest.fixture
def ticks_queued(monkeypatch) -> list[int]:
    queued: list[int] = []
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda agent_id: queued.append(agent_id))
    return queued


def spend_the_day(user) -> None:
    for _ in range(3):
        make_call(by=acting(user))


def api_url(name: str, agent) -> str:
    return reverse(f"agents-api:{name}", args=[agent.pk])


def test_ticks_past_the_cap_are_429_and_nothing_is_queued(api, user, ticks_queued, django_capture_on_commit_callbacks):
    agents = [AgentFactory() for _ in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        answers = [api.post(api_url("tick", agent)) for agent in agents]
    assert [answer.status_code for answer in answers] == [202, 202, 429]
    refused = answers[2].json()
    assert "You have 2 ticks in flight; the cap is 2 (MEMSITE_QUOTA_TICKS)" in refused["detail"]
    assert int(answers[2]["Retry-After"]) >= 1
    assert_documented(answers[2], "/api/agents/{agent_id}/tick/", "post")
    assert ticks_queued == [agents[0].pk, agents[1].pk]
    assert not Brain.objects.filter(pk=agents[2].pk, tick_queued_at__isnull=False).exists()


def test_the_dashboard_is_under_the_same_cap(client, user, ticks_queued):
    client.force_login(user)
    agents = [AgentFactory() for _ in range(3)]
    answers = [client.post(reverse("agents:brain_tick", args=[agent.pk]), HTTP_HX_REQUEST="true") for agent in agents]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert "the cap is 2 (MEMSITE_QUOTA_TICKS)" in answers[2].content.decode()


def test_a_tick_asked_for_while_one_waits_adds_nothing(user, ticks_queued, django_capture_on_commit_callbacks):
    agent = AgentFactory()
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(5):
            services.tick_request(agent=agent, by=acting(user))
    assert ticks_queued == [agent.pk]
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.tick_queued_by_id == user.pk and brain.tick_queued_at is not None


def test_a_tick_is_charged_to_whoever_asked_for_it(user, ticks_queued):
    agent = AgentFactory()
    services.tick_request(agent=agent, by=acting(user))
    run = services.tick_run(agent_id=agent.pk)
    assert run.status == TickRun.Status.DONE and run.user_id == user.pk
    calls = LLMCall.objects.filter(served_id=run.pk, served_type__model="tickrun")
    assert calls.exists() and set(calls.values_list("user_id", flat=True)) == {user.pk}
    assert Brain.objects.get(pk=agent.pk).tick_queued_at is None  # it began: no longer queued


def test_a_tick_that_meets_a_spent_budget_fails_with_the_reason(user, served_llm):
    agent = AgentFactory()
    services.ticking_start(agent=agent, interval_s=60, by=acting(user))
    spend_the_day(user)
    run = services.tick_run(agent_id=agent.pk)
    assert run.status == TickRun.Status.FAILED
    assert run.error.startswith("decide: The daily LLM budget is spent: 3 of 3 LLM calls")
    assert LLMCall.objects.filter(user=user).count() == 3


@pytest.mark.parametrize("interval", [1, 9])
def test_an_interval_shorter_than_the_minimum_is_400(api, client, user, interval):
    agent = AgentFactory()
    answer = api.post(api_url("ticking-start", agent), {"interval_s": interval}, format="json")
    assert answer.status_code == 400
    assert "interval_s must be an integer from 10 to" in answer.json()["detail"]
    client.force_login(user)
    page = client.post(
        reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": interval}, HTTP_HX_REQUEST="true"
    )
    assert page.status_code == 400 and "MEMSITE_TICK_MIN_INTERVAL_S" in page.content.decode()
    assert not Brain.objects.filter(pk=agent.pk, ticking=True).exists()


def test_agents_ticking_past_the_cap_are_429(api, user):
    first, second = AgentFactory(), AgentFactory()
    assert api.post(api_url("ticking-start", first), {"interval_s": 60}, format="json").status_code == 200
    refused = api.post(api_url("ticking-start", second), {"interval_s": 60}, format="json")
    assert refused.status_code == 429
    assert "1 agents ticking in flight; the cap is 1 (MEMSITE_QUOTA_TICKING_AGENTS)" in refused.json()["detail"]
    assert_documented(refused, "/api/agents/{agent_id}/ticking/start/", "post")
    assert not Brain.objects.filter(pk=second.pk, ticking=True).exists()
    # A new interval for the agent that ticks already is no second agent.
    assert api.post(api_url("ticking-start", first), {"interval_s": 30}, format="json").status_code == 200
    assert Brain.objects.get(pk=first.pk).ticking_by_id == user.pk


def test_beat_queues_no_tick_past_a_users_cap_or_budget(settings, ticks_queued, django_capture_on_commit_callbacks):
    settings.MEMSITE_QUOTA_TICKING_AGENTS = 10
    busy, broke = UserFactory(), UserFactory()
    busy_agents = [AgentFactory() for _ in range(3)]
    broke_agent = AgentFactory()
    for agent in busy_agents:
        services.ticking_start(agent=agent, interval_s=60, by=acting(busy))
    services.ticking_start(agent=broke_agent, interval_s=60, by=acting(broke))
    spend_the_day(broke)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 2
    assert sorted(ticks_queued) == sorted(agent.pk for agent in busy_agents[:2])
    # Every due brain moved on, so the skipped ones wait for their next turn rather than pile up.
    assert not Brain.objects.filter(ticking=True, next_tick_at__lte=timezone.now()).exists()
    assert Brain.objects.get(pk=broke_agent.pk).next_tick_at > timezone.now() + timedelta(seconds=50)


def test_beat_queues_no_tick_in_a_space_whose_budget_is_spent(user, ticks_queued, django_capture_on_commit_callbacks):
    lab = space_create(user=user, slug="lab", name="Lab")
    users, theirs = AgentFactory(space=lab), AgentFactory(space=lab)
    elsewhere = AgentFactory()  # the same user's, in the default space
    services.ticking_start(agent=users, interval_s=60, by=acting(user, lab))
    services.ticking_start(agent=theirs, interval_s=60, by=a_member(lab))
    services.ticking_start(agent=elsewhere, interval_s=60, by=acting(user))
    lab.llm_daily_calls = 2
    lab.save()
    for _ in range(2):
        make_call(by=system(lab))  # the space's day, none of it the user's own

    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 1
    assert ticks_queued == [elsewhere.pk]
    assert not Brain.objects.filter(ticking=True, next_tick_at__lte=timezone.now()).exists()


def test_beat_queues_no_tick_through_a_token_whose_budget_is_spent(
    settings, user, ticks_queued, django_capture_on_commit_callbacks
):
    settings.MEMSITE_QUOTA_TICKING_AGENTS = 10
    token = token_create(member=user, space=default_space(), name="node", llm_daily_calls=1).token
    through_token, by_session = AgentFactory(), AgentFactory()
    services.ticking_start(agent=through_token, interval_s=60, by=token_principal(token))
    services.ticking_start(agent=by_session, interval_s=60, by=acting(user))
    make_call(by=token_principal(token))  # the token's day; the user's goes on

    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 1
    assert ticks_queued == [by_session.pk]


def test_a_tick_set_going_through_a_folder_token_writes_only_there_and_within_its_budget(
    settings, user, internal, openai_gateway, ticks_queued, django_capture_on_commit_callbacks
):
    settings.MEMSITE_LLM_DAILY_CALLS = 100  # the member's own budget has room: the token's bounds the tick
    token = token_create(
        member=user, space=default_space(), name="node a", write_under="/swarmstar/nodes/a/", llm_daily_calls=2
    ).token
    agent = AgentFactory(name="scout")
    services.ticking_start(agent=agent, interval_s=60, by=token_principal(token))
    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 1
    note = {"action": "write_note", "arguments": {"name": "n.md", "content": "x"}, "reason": "To keep it."}
    openai_gateway.script(Reply.json(note), Reply.json({"thought": "Refused.", "inner_thought": None}))

    run = services.tick_run(agent_id=agent.pk)

    act = next(step for step in run.steps if step["name"] == "act")
    assert not act["detail"]["ok"] and "This token writes only under /swarmstar/nodes/a/" in act["detail"]["summary"]
    assert not Node.objects.filter(name__startswith=f"agent-{agent.pk}").exists()  # no folder, no note
    replan = next(step for step in run.steps if step["name"] == "replan")  # the failed action's new plan
    assert "The token's daily LLM budget is spent: 2 of 2 LLM calls" in replan["detail"]["error"]
    assert (run.user_id, run.token_id) == (user.pk, token.pk)
    assert LLMCall.objects.filter(token=token).count() == 2 == LLMCall.objects.count()
    assert_every_call_has_a_principal()


def test_a_tick_for_a_member_who_left_fails_and_beat_stops_the_agent(user, ticks_queued):
    agent = AgentFactory()
    services.ticking_start(agent=agent, interval_s=60, by=acting(user))
    membership_remove(space=default_space(), username=user.username)

    run = services.tick_run(agent_id=agent.pk)

    assert run.status == TickRun.Status.FAILED and run.error == ASKER_GONE and not LLMCall.objects.exists()
    Brain.objects.filter(pk=agent.pk).update(next_tick_at=timezone.now())
    assert services.ticks_start_due() == 0 and ticks_queued == []
    assert not Brain.objects.get(pk=agent.pk).ticking  # it would tick as nobody


def test_memsite_itself_sets_no_agent_ticking(ticks_queued):
    agent = AgentFactory()
    for start in (
        lambda: services.ticking_start(agent=agent, interval_s=60, by=system()),
        lambda: services.tick_request(agent=agent, by=system()),
    ):
        with pytest.raises(InvalidInput, match="An agent ticks for a member"):
            start()
    assert not Brain.objects.filter(pk=agent.pk, ticking=True).exists() and ticks_queued == []


def test_a_chat_with_the_budget_spent_is_429_and_writes_nothing(api, user):
    agent = AgentFactory()
    spend_the_day(user)
    refused = api.post(api_url("chat", agent), {"text": "How are you?"}, format="json")
    assert refused.status_code == 429, refused.content
    assert refused.json()["quota"] == "daily_llm_budget"
    assert_documented(refused, "/api/agents/{agent_id}/chat/", "post")
    assert not Message.objects.filter(agent=agent).exists()
    # A goal asks no LLM.
    assert api.post(api_url("chat", agent), {"text": "goal: map the tree"}, format="json").status_code == 201
