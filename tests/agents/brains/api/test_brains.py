import json
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

from agents.brains.models import Brain, Goal, Record, RecordKind, TickRun
from agents.brains.selectors.brains import BRAIN_COLLECTIONS
from agents.brains.services.brains import brain_create, brain_writing, goal_complete, goal_create
from agents.context.logic.assembly import LONG_TERM_HEADING, WORKING_HEADING
from agents.context.models import Message
from tests.factories import AgentFactory
from tests.fake_openai import Reply
from tests.llm.factories import make_call
from tests.openapi import assert_documented, served_schema

pytestmark = pytest.mark.django_db

START = timezone.now() - timedelta(hours=1)


def url(name: str, *args) -> str:
    return reverse(f"agents-api:{name}", args=args)


def records(agent, kind: str = RecordKind.THOUGHT) -> list[tuple[int, str]]:
    return list(Record.objects.filter(brain_id=agent.pk, kind=kind).order_by("seq").values_list("seq", "text"))


def conversation(agent) -> list[tuple[int, str, str]]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list("position", "role", "content"))


def brain_row(agent) -> dict:
    return Brain.objects.filter(pk=agent.pk).values().first()


def write_thoughts(agent, count: int, prefix: str = "thought") -> None:
    with brain_writing(agent=agent) as brain:
        for number in range(1, count + 1):
            brain.record(
                kind=RecordKind.THOUGHT, text=f"{prefix} {number}", item={}, at=START + timedelta(seconds=number)
            )


def write_links(agent, count: int) -> None:
    """`count` concept neurons, each linked from `self`."""
    with brain_writing(agent=agent) as brain:
        me = brain.neuron(kind="self", label="self", at=START, strength=0.0)
        for number in range(count):
            concept = brain.neuron(kind="concept", label=f"c{number}", at=START)
            brain.connect(me, concept, at=START, weight=0.1 * (number + 1))


def tick(agent, number: int, *, status: str = "done", joy: float = 0.0, steps: list | None = None) -> TickRun:
    brain_create(agent=agent)
    return TickRun.objects.create(
        brain_id=agent.pk,
        number=number,
        status=status,
        action="list_dir",
        steps=steps or [{"name": "read", "ms": 3, "detail": {}}],
        emotions={"joy": joy, "frustration": 0.0, "interest": 0.0, "confusion": 0.0},
        hormones={"dopamine": 0.5, "cortisol": 0.5, "serotonin": 0.5},
        ended_at=None if status == "running" else timezone.now(),
    )


def page_of(response) -> tuple[list, str | None, str | None]:
    body = response.json()
    return body["results"], body["next"], body["previous"]


def path_of(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def agent():
    return AgentFactory(name="scout", model="gpt-4")


# -- access ------------------------------------------------------------------------------------

ENDPOINTS = [
    ("get", "brain", None),
    *(("get", f"brain-{name}", None) for name in BRAIN_COLLECTIONS),
    ("post", "tick", None),
    ("post", "ticking-start", {"interval_s": 5}),
    ("post", "ticking-pause", None),
    ("post", "chat", {"text": "hello"}),
    ("post", "goal-create", {"text": "learn"}),
    ("get", "memory-json", None),
    ("put", "memory-json", {"thoughts": [{"text": "planted"}]}),
]


@pytest.mark.parametrize(("method", "name", "body"), ENDPOINTS)
def test_every_endpoint_requires_authentication(agent, method, name, body, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        response = getattr(APIClient(), method)(url(name, agent.pk), body, format="json")
    assert response.status_code in (401, 403)
    assert not Brain.objects.filter(pk=agent.pk).exists() and not queued


def test_completing_a_goal_requires_authentication(agent):
    goal = goal_create(agent=agent, text="learn")
    response = APIClient().post(url("goal-complete", agent.pk, goal.pk))
    assert response.status_code in (401, 403)
    assert Goal.objects.get(pk=goal.pk).status == "active"


@pytest.mark.parametrize(("method", "name", "body"), ENDPOINTS)
def test_an_unknown_agent_is_not_found(api, method, name, body):
    response = getattr(api, method)(url(name, 999), body, format="json")
    assert response.status_code == 404 and "999" in response.json()["detail"]
    assert not Brain.objects.exists()


# -- the brain's state -------------------------------------------------------------------------


def test_an_agent_without_a_brain_reads_as_an_empty_one_and_nothing_is_written(api, agent):
    body = api.get(url("brain", agent.pk)).json()

    assert not Brain.objects.filter(pk=agent.pk).exists()
    assert body["created_at"] is None and body["self_summary"] == "" and body["goals"] == []
    assert body["plan"] == {"steps": [], "current": None, "current_step": None}
    assert body["emotions"] == {"joy": 0.0, "frustration": 0.0, "interest": 0.0, "confusion": 0.0}
    assert body["hormones"] == {"dopamine": 0.5, "cortisol": 0.5, "serotonin": 0.5}
    assert set(body["counts"].values()) == {0}
    assert body["ticking"] == {
        "ticking": False,
        "interval_s": 60,
        "next_tick_at": None,
        "tick_count": 0,
        "running": None,
        "last": None,
        "idle": True,
    }


def test_the_brain_gives_its_state_plan_goals_and_counts(api, agent):
    write_thoughts(agent, 3)
    write_links(agent, 4)
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.EPISODE, text="listed /", item={"type": "list_dir", "where": "/"}, at=START)
        brain.record(kind=RecordKind.FACT, text="The sky is blue.", item={}, at=START)
        brain.explored(kind="path", key="/notes", summary="notes", at=START)
        brain.set(
            self_summary="I read notes.",
            plan=["list /", "read /notes", "write a note"],
            plan_step=1,
            emotions={"joy": 0.3, "frustration": 0.0, "interest": 0.2, "confusion": 0.0},
            last_error="no such path",
            tick_count=2,
        )
    done = goal_create(agent=agent, text="read everything")
    goal_complete(agent=agent, goal_id=done.pk)
    active = goal_create(agent=agent, text="write a note")
    tick(agent, 1)
    tick(agent, 2, joy=0.3)

    body = api.get(url("brain", agent.pk)).json()

    assert body["agent"] == agent.pk and body["self_summary"] == "I read notes."
    assert body["plan"] == {
        "steps": ["list /", "read /notes", "write a note"],
        "current": 1,
        "current_step": "read /notes",
    }
    assert [(goal["id"], goal["status"]) for goal in body["goals"]] == [(active.pk, "active"), (done.pk, "done")]
    assert body["emotions"]["joy"] == 0.3 and body["last_error"] == "no such path"
    assert body["counts"] == {
        "thoughts": 3,
        "inner_thoughts": 0,
        "episodes": 1,
        "facts": 1,
        "self_instructions": 0,
        "logs": 3,  # a goal added, done, and another added
        "explored_paths": 1,
        "explored_urls": 0,
        "neurons": 5,
        "synapses": 4,
        "ticks": 2,
        "goals": 2,
    }
    assert body["ticking"]["tick_count"] == 2 and body["ticking"]["last"]["number"] == 2
    assert body["ticking"]["running"] is None and body["ticking"]["idle"] is True


def test_list_counts_follow_the_caps(api, agent, settings):
    settings.MEMSITE_BRAIN_CAPS = {"thought": 5}
    write_thoughts(agent, 12)

    assert api.get(url("brain", agent.pk)).json()["counts"]["thoughts"] == 5 == len(records(agent))


def test_a_tick_is_running_while_it_holds_the_lease(api, agent):
    tick(agent, 1)
    tick(agent, 2, status="running")
    Brain.objects.filter(pk=agent.pk).update(tick_count=2, lease_until=timezone.now() + timedelta(minutes=5))

    ticking = api.get(url("brain", agent.pk)).json()["ticking"]
    assert ticking["running"]["number"] == 2 and ticking["last"]["number"] == 1 and ticking["idle"] is False

    # A worker that died left its run `running`; its lease has run out.
    Brain.objects.filter(pk=agent.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    ticking = api.get(url("brain", agent.pk)).json()["ticking"]
    assert ticking["running"] is None and ticking["idle"] is True


def test_reading_counts_no_large_collection(api, agent):
    write_links(agent, 30)
    write_thoughts(agent, 30)
    with CaptureQueriesContext(connection) as queries:
        assert api.get(url("brain", agent.pk)).status_code == 200
        assert api.get(url("brain-synapses", agent.pk)).status_code == 200
        assert api.get(url("brain-neurons", agent.pk)).status_code == 200
    counted = [query["sql"] for query in queries if "COUNT(" in query["sql"].upper()]
    assert counted and all("agents_tickrun" in sql for sql in counted)  # tick runs are capped at 1,000


def test_a_page_costs_the_same_whatever_the_collection_size(api, agent):
    write_links(agent, 3)

    def queries_for_a_page() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get(url("brain-synapses", agent.pk), {"page_size": 2}).status_code == 200
        return len(queries)

    api.get(url("brain", agent.pk))  # the token's first use is noted (at most once a minute): not measured here
    small = queries_for_a_page()
    write_links(agent, 60)
    assert queries_for_a_page() == small


# -- collections -------------------------------------------------------------------------------


def test_collections_list_newest_first_a_page_at_a_time(api, agent):
    write_thoughts(agent, 7)

    results, next_link, previous = page_of(api.get(url("brain-thoughts", agent.pk), {"page_size": 3}))
    assert [entry["seq"] for entry in results] == [7, 6, 5] and previous is None
    assert results[0] == {"seq": 7, "text": "thought 7", "data": {}, "created_at": results[0]["created_at"]}

    # New thoughts while paging do not move the pages already cut.
    write_thoughts(agent, 2, prefix="later")
    results, next_link, previous = page_of(api.get(path_of(next_link)))
    assert [entry["seq"] for entry in results] == [4, 3, 2]
    last, end, _ = page_of(api.get(path_of(next_link)))
    assert [entry["seq"] for entry in last] == [1] and end is None

    newer, _, _ = page_of(api.get(path_of(previous)))
    assert [entry["seq"] for entry in newer] == [7, 6, 5]
    first, _, _ = page_of(api.get(url("brain-thoughts", agent.pk), {"page_size": 3}))
    assert [entry["seq"] for entry in first] == [9, 8, 7]


def test_the_default_page_is_fifty(api, agent):
    write_thoughts(agent, 55)
    results, next_link, _ = page_of(api.get(url("brain-thoughts", agent.pk)))
    assert len(results) == 50 and next_link is not None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"page_size": "0"}, "page_size"),
        ({"page_size": "501"}, "page_size"),
        ({"page_size": "x"}, "page_size"),
        ({"cursor": "nonsense"}, "cursor"),
    ],
)
def test_bad_page_parameters_are_refused(api, agent, query, field):
    response = api.get(url("brain-thoughts", agent.pk), query)
    assert response.status_code == 400 and field in response.json()


def test_each_list_collection_holds_its_own_kind(api, agent):
    with brain_writing(agent=agent) as brain:
        for kind in RecordKind.values:
            brain.record(kind=kind, text=f"a {kind}", item={}, at=START)
    for name, collection in BRAIN_COLLECTIONS.items():
        if collection.model is not Record:
            continue
        results, _, _ = page_of(api.get(url(f"brain-{name}", agent.pk)))
        assert [entry["text"] for entry in results] == [f"a {collection.kind}"], name


def test_explored_paths_and_urls(api, agent):
    with brain_writing(agent=agent) as brain:
        brain.explored(kind="path", key="/a", summary="first", at=START)
        brain.explored(kind="path", key="/b", summary="second", at=START)
        brain.explored(kind="url", key="https://docs.example.org/", summary="docs", at=START)

    paths, _, _ = page_of(api.get(url("brain-explored-paths", agent.pk)))
    urls, _, _ = page_of(api.get(url("brain-explored-urls", agent.pk)))
    assert [(entry["key"], entry["summary"]) for entry in paths] == [("/b", "second"), ("/a", "first")]
    assert [entry["key"] for entry in urls] == ["https://docs.example.org/"]
    assert set(paths[0]) == {"id", "key", "summary", "at"}


def test_neurons_and_synapses(api, agent):
    write_links(agent, 3)
    neurons, _, _ = page_of(api.get(url("brain-neurons", agent.pk)))
    synapses, next_link, _ = page_of(api.get(url("brain-synapses", agent.pk), {"page_size": 2}))

    assert [neuron["key"] for neuron in neurons] == ["concept:c2", "concept:c1", "concept:c0", "self"]
    assert set(neurons[0]) == {"id", "key", "kind", "label", "strength", "last_used", "data"}
    assert [(synapse["source"]["key"], synapse["target"]["label"]) for synapse in synapses] == [
        ("self", "c2"),
        ("self", "c1"),
    ]
    assert synapses[0]["weight"] == pytest.approx(0.3)
    rest, _, _ = page_of(api.get(path_of(next_link)))
    assert [synapse["target"]["label"] for synapse in rest] == ["c0"]


def test_ticks_with_their_steps(api, agent):
    first = tick(
        agent,
        1,
        steps=[{"name": "read", "ms": 2, "detail": {}}, {"name": "decide", "ms": 5, "detail": {"action": "list_dir"}}],
    )
    make_call(served=first, provider="openai")
    make_call(served=first, provider="offline", model="offline")  # heuristics wrote part of it
    make_call(served=tick(agent, 2, status="failed"), provider="offline", ok=False)  # a failed call wrote nothing

    results, _, _ = page_of(api.get(url("brain-ticks", agent.pk)))
    assert [(entry["number"], entry["status"], entry["provider"]) for entry in results] == [
        (2, "failed", None),
        (1, "done", "offline"),
    ]
    assert [step["name"] for step in results[1]["steps"]] == ["read", "decide"]
    assert results[1]["emotions"]["joy"] == 0.0 and results[1]["action"] == "list_dir"


def test_another_agents_brain_is_not_listed(api, agent):
    other = AgentFactory()
    write_thoughts(other, 2)
    results, _, _ = page_of(api.get(url("brain-thoughts", agent.pk)))
    assert results == []


# -- ticks -------------------------------------------------------------------------------------


def test_a_tick_is_queued(api, agent, django_capture_on_commit_callbacks, monkeypatch):
    queued = []
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda **kwargs: queued.append(kwargs))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(url("tick", agent.pk))

    assert response.status_code == 202
    body = response.json()
    assert body["queued"] is True and body["after"] == 0 and body["ticking"]["ticking"] is False
    assert queued == [{"agent_id": agent.pk}]


def test_ticking_starts_and_pauses(api, agent):
    response = api.post(url("ticking-start", agent.pk), {"interval_s": 30}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["ticking"] is True and body["interval_s"] == 30 and body["next_tick_at"] is not None
    assert body["idle"] is False

    response = api.post(url("ticking-pause", agent.pk))
    assert response.status_code == 200
    assert response.json()["ticking"] is False and response.json()["idle"] is True
    assert brain_row(agent)["ticking"] is False


@pytest.mark.parametrize(
    "body", [{}, {"interval_s": "30"}, {"interval_s": 0}, {"interval_s": 30.5}, {"interval_s": 30, "jitter": 1}]
)
def test_a_bad_interval_changes_nothing(api, agent, body):
    response = api.post(url("ticking-start", agent.pk), body, format="json")
    assert response.status_code == 400
    assert not Brain.objects.filter(pk=agent.pk).exists()


# -- chat and goals ----------------------------------------------------------------------------


def test_chat_answers_with_the_exchange(api, agent):
    response = api.post(url("chat", agent.pk), {"text": "What have you read?"}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["user"]["content"] == "What have you read?" and body["user"]["role"] == "user"
    assert body["reply"]["role"] == "assistant" and body["reply"]["content"]
    assert body["reply"]["position"] == body["user"]["position"] + 1 and body["goal"] is None
    assert conversation(agent) == [(1, "user", "What have you read?"), (2, "assistant", body["reply"]["content"])]


def test_a_message_appended_to_the_conversation_is_in_the_next_chats_prompt(api, agent, openai_gateway):
    llm = openai_gateway
    llm.script(Reply.json({"reply": "It is the deploy checklist."}))
    appended = {"role": "user", "content": "Remember: the checklist lives in /ops/deploy.md.", "sender": "ops"}
    assert api.post(url("messages", agent.pk), appended, format="json").status_code == 201

    body = api.post(url("chat", agent.pk), {"text": "Where is the checklist?"}, format="json").json()

    prompt = llm.requests[-1].messages
    said = [(message["role"], message["content"]) for message in prompt if message["role"] != "system"]
    assert said == [("user", appended["content"]), ("user", "Where is the checklist?")]
    assert conversation(agent) == [
        (1, "user", appended["content"]),
        (2, "user", "Where is the checklist?"),
        (3, "assistant", "It is the deploy checklist."),
    ]
    # The thread the messages API lists is the chat's, newest first.
    listed = api.get(url("messages", agent.pk)).json()["results"]
    assert [message["content"] for message in listed] == [body["reply"]["content"], *reversed([c for _, c in said])]


def test_a_chats_prompt_is_the_agents_assembled_context(api, agent, openai_gateway):
    llm = openai_gateway
    agent.instructions = "You are $who."
    agent.context_variables = {"who": "the harbour's archivist"}
    agent.save(update_fields=["instructions", "context_variables"])
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.FACT, text="The harbour office opens at nine.", item={}, at=START)
    pinned = {"role": "system", "content": "Always answer in one sentence.", "pinned": True}
    assert api.post(url("messages", agent.pk), pinned, format="json").status_code == 201
    llm.script(Reply.json({"reply": "At nine.", "citations": ["fact:1"]}))
    before = [message["content"] for message in api.get(url("agent-context", agent.pk)).json()["messages"]]

    api.post(url("chat", agent.pk), {"text": "When does the harbour office open?"}, format="json")

    prompt = [message["content"] for message in llm.requests[-1].messages]
    assert before == ["You are the harbour's archivist.", "Always answer in one sentence."]
    # The context the agent's page shows, with the user's line, and what chat adds as memory.
    added = [content for content in prompt if content.startswith((WORKING_HEADING, LONG_TERM_HEADING))]
    assert [content for content in prompt if content not in added] == [*before, "When does the harbour office open?"]
    assert '[fact:1] "The harbour office opens at nine."' in added[-1]
    after = [message["content"] for message in api.get(url("agent-context", agent.pk)).json()["messages"]]
    assert after == [*before, "When does the harbour office open?", "At nine."]


def test_chat_says_the_provider_and_what_the_reply_cites(api, agent, settings):
    settings.MEMSITE_EMBEDDINGS = "off"
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.FACT, text="The harbour office opens at nine.", item={}, at=START)

    body = api.post(url("chat", agent.pk), {"text": "When does the harbour office open?"}, format="json").json()

    assert body["provider"] == "offline" and "opens at nine" in body["reply"]["content"]
    cited = {"id": "fact:1", "kind": "fact", "ref": "1", "label": "fact 1"}
    assert body["citations"] == [cited]
    assert body["reply"]["data"]["citations"] == [cited] and body["reply"]["data"]["provider"] == "offline"


def test_chat_can_set_a_goal(api, agent):
    body = api.post(url("chat", agent.pk), {"text": "goal: map the notes"}, format="json").json()
    assert body["provider"] is None and body["citations"] == []
    assert body["goal"]["text"] == "map the notes" and body["goal"]["status"] == "active"
    assert Goal.objects.get(brain_id=agent.pk).text == "map the notes"


@pytest.mark.parametrize(
    "body", [{}, {"text": ""}, {"text": "   "}, {"text": 42}, {"text": "hi", "role": "user"}, {"text": "x" * 4_001}]
)
def test_bad_chat_is_refused_and_nothing_is_written(api, agent, body):
    response = api.post(url("chat", agent.pk), body, format="json")
    assert response.status_code == 400 and response.json()
    assert conversation(agent) == []


def test_chat_while_tool_calls_wait_for_results_is_refused_and_writes_nothing(api, agent):
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    api.post(url("messages", agent.pk), {"role": "assistant", "tool_calls": [call]}, format="json")

    response = api.post(url("chat", agent.pk), {"text": "Hello?"}, format="json")

    assert response.status_code == 400 and "wait for their results" in response.json()["detail"]
    assert conversation(agent) == [(1, "assistant", "")]
    assert not Brain.objects.filter(pk=agent.pk).exists()  # nor the user model's last message


def test_chat_on_a_conversation_past_its_budget_is_refused_and_writes_nothing(api, agent):
    api.post(url("messages", agent.pk), {"role": "user", "content": "A long story. " * 20}, format="json")
    agent.conversation_token_budget = 10
    agent.save(update_fields=["conversation_token_budget"])

    response = api.post(url("chat", agent.pk), {"text": "goal: map the notes"}, format="json")

    assert response.status_code == 422 and response.json()["reason"] == "conversation_budget"
    assert len(conversation(agent)) == 1 and not Goal.objects.filter(brain_id=agent.pk).exists()


def test_a_failed_reply_is_502_and_the_users_line_is_kept(api, agent, settings, fake_openai):
    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.url
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    fake_openai.script(Reply.failure(500, "The model is down."))

    response = api.post(url("chat", agent.pk), {"text": "Are you there?"}, format="json")

    assert response.status_code == 502
    body = response.json()
    assert "LLM call failed" in body["detail"] and body["reason"] == "server_error" and body["user_message"] == 1
    assert conversation(agent) == [(1, "user", "Are you there?")]


def test_goals_are_created_and_completed(api, agent):
    response = api.post(url("goal-create", agent.pk), {"text": "map the notes"}, format="json")
    assert response.status_code == 201
    goal = response.json()
    assert goal["text"] == "map the notes" and goal["status"] == "active" and goal["done_at"] is None

    response = api.post(url("goal-complete", agent.pk, goal["id"]))
    assert response.status_code == 200
    assert response.json()["status"] == "done" and response.json()["done_at"] is not None

    assert api.post(url("goal-complete", agent.pk, goal["id"])).status_code == 409


@pytest.mark.parametrize("body", [{}, {"text": ""}, {"text": 7}, {"text": "g" * 501}, {"text": "a", "status": "done"}])
def test_a_bad_goal_is_refused_and_nothing_is_written(api, agent, body):
    response = api.post(url("goal-create", agent.pk), body, format="json")
    assert response.status_code == 400
    assert not Goal.objects.exists()


def test_a_goal_sent_without_a_content_type_is_a_documented_415(api, agent):
    response = api.generic("POST", url("goal-create", agent.pk), b"write the docs", content_type="")
    assert response.status_code == 415
    assert_documented(response, "/api/agents/{agent_id}/goals/", "post")
    assert not Goal.objects.exists()


def test_goals_past_the_cap_conflict(api, agent, settings):
    settings.MEMSITE_BRAIN_CAPS = {"goal": 2}
    goal_create(agent=agent, text="one")
    goal_create(agent=agent, text="two")
    response = api.post(url("goal-create", agent.pk), {"text": "three"}, format="json")
    assert response.status_code == 409 and "complete one first" in response.json()["detail"]
    assert Goal.objects.count() == 2


def test_another_agents_goal_is_not_found(api, agent):
    other = AgentFactory()
    goal = goal_create(agent=other, text="theirs")
    assert api.post(url("goal-complete", agent.pk, goal.pk)).status_code == 404
    assert api.post(url("goal-complete", agent.pk, 999)).status_code == 404
    assert Goal.objects.get(pk=goal.pk).status == "active"


# -- memory.json -------------------------------------------------------------------------------


def test_memory_json_is_a_download(api, agent):
    write_thoughts(agent, 2)
    response = api.get(url("memory-json", agent.pk))

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="agent-{agent.pk}-memory.json"'
    document = response.json()
    assert [entry["text"] for entry in document["thoughts"]] == ["thought 1", "thought 2"]
    assert "self" in document["neurons"] and document["state"]["plan"] is None


def test_memory_json_round_trips(api, agent):
    write_thoughts(agent, 3)
    write_links(agent, 3)
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.FACT, text="Cats purr.", item={}, at=START)
        brain.explored(kind="url", key="https://docs.example.org/", summary="docs", at=START)
        brain.set(self_summary="I like cats.", plan=["read", "write"], plan_step=1)
    goal_create(agent=agent, text="pet the cat")
    exported = api.get(url("memory-json", agent.pk)).content

    other = AgentFactory()
    response = api.put(url("memory-json", other.pk), exported, content_type="application/json")

    assert response.status_code == 200
    report = response.json()
    assert report["imported"]["thoughts"] == 3 and report["imported"]["synapses"] == 3
    assert set(report) == {"imported", "trimmed", "dropped", "clipped", "kept_keys", "added_self_neuron"}
    assert json.loads(api.get(url("memory-json", other.pk)).content) == json.loads(exported)
    state = api.get(url("brain", other.pk)).json()
    assert state["self_summary"] == "I like cats." and state["plan"]["current_step"] == "write"
    assert state["counts"]["neurons"] == 4 and [goal["text"] for goal in state["goals"]] == ["pet the cat"]


def test_memory_json_takes_any_content_type(api, agent):
    document = json.dumps({"thoughts": [{"text": "planted"}]}).encode()
    response = api.put(url("memory-json", agent.pk), document, content_type="application/octet-stream")
    assert response.status_code == 200
    assert records(agent) == [(1, "planted")]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (json.dumps({"thoughts": "many"}).encode(), "thoughts"),
    ],
)
def test_an_invalid_memory_json_changes_nothing(api, agent, document, message):
    write_thoughts(agent, 2)
    before = brain_row(agent), records(agent)

    response = api.put(url("memory-json", agent.pk), document, content_type="application/json")

    assert response.status_code == 400 and message in response.json()["detail"]
    assert (brain_row(agent), records(agent)) == before


def test_an_empty_body_is_not_an_empty_brain(api, agent):
    write_thoughts(agent, 2)
    response = api.generic(
        "PUT", url("memory-json", agent.pk), b"", content_type="application/json", CONTENT_LENGTH="0"
    )
    assert response.status_code == 400 and "request body" in response.json()["detail"]
    assert len(records(agent)) == 2


def test_a_memory_json_over_the_cap_is_413(api, agent, settings):
    settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES = 100
    write_thoughts(agent, 2)
    document = json.dumps({"thoughts": [{"text": "x" * 200}]}).encode()

    response = api.put(url("memory-json", agent.pk), document, content_type="application/json")

    assert response.status_code == 413 and "limit is 100 bytes" in response.json()["detail"]
    assert [text for _, text in records(agent)] == ["thought 1", "thought 2"]


def test_a_memory_json_without_a_length_is_411(api, agent):
    response = api.generic(
        "PUT", url("memory-json", agent.pk), b"{}", content_type="application/json", CONTENT_LENGTH=""
    )
    assert response.status_code == 411
    assert not Brain.objects.filter(pk=agent.pk).exists()


# -- the schema --------------------------------------------------------------------------------


def test_every_brain_operation_is_in_the_schema(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    validate_schema(schema)
    operations = {(path, method) for path, item in schema["paths"].items() for method in item if method != "parameters"}
    agent = "/api/agents/{agent_id}"
    assert {
        (f"{agent}/brain/", "get"),
        *((f"{agent}/brain/{name}/", "get") for name in BRAIN_COLLECTIONS),
        (f"{agent}/tick/", "post"),
        (f"{agent}/ticking/start/", "post"),
        (f"{agent}/ticking/pause/", "post"),
        (f"{agent}/chat/", "post"),
        (f"{agent}/goals/", "post"),
        (f"{agent}/goals/{{goal_id}}/complete/", "post"),
        (f"{agent}/memory.json", "get"),
        (f"{agent}/memory.json", "put"),
    } <= operations
    synapses = schema["paths"][f"{agent}/brain/synapses/"]["get"]
    page = synapses["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][page]["properties"]["results"]["items"]["$ref"].endswith("/BrainSynapse")
    assert {parameter["name"] for parameter in synapses["parameters"]} == {"agent_id", "cursor", "page_size"}


def test_a_page_size_of_zero_is_refused_as_its_documented_bounds_say(api, agent):
    schema = served_schema()
    thoughts = schema["paths"]["/api/agents/{agent_id}/brain/thoughts/"]["get"]
    [page_size] = [parameter for parameter in thoughts["parameters"] if parameter["name"] == "page_size"]
    assert page_size["schema"] == {"type": "integer", "minimum": 1, "maximum": 500}

    response = api.get(url("brain-thoughts", agent.pk), {"page_size": 0})
    assert response.status_code == 400
    assert_documented(response, "/api/agents/{agent_id}/brain/thoughts/", "get", schema)
