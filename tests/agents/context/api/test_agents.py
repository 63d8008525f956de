import pytest
import yaml
from django.urls import reverse
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

from agents.context import services
from agents.context.models import Agent, Checkpoint, Message, Summary
from tests.agents.support import say, stored, words
from tests.factories import AgentFactory
from tests.openapi import assert_documented, served_schema

pytestmark = pytest.mark.django_db

CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def url(name: str, *args) -> str:
    return reverse(f"agents-api:{name}", args=args)


class TestAgentCreate:
    def test_creates_an_agent(self, api):
        response = api.post(
            url("agent-create"),
            {
                "name": "planner",
                "model": "gpt-4o",
                "instructions": "Help $user.",
                "context_variables": {"user": "Ada"},
                "strategy": "sliding_window",
                "turn_input_limit": 2_000,
                "compaction_target": 0.5,
            },
            format="json",
        )

        assert response.status_code == 201
        body = response.json()
        agent = Agent.objects.get(pk=body["id"])
        assert response["Location"] == url("agent-detail", agent.pk)
        assert body["name"] == "planner" and body["strategy"] == "sliding_window"
        assert (body["turn_input_limit"], body["compaction_target"], body["warning_threshold"]) == (2_000, 0.5, 0.8)
        assert body["context_variables"] == {"user": "Ada"} and body["message_count"] == 0

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"model": "gpt-4o"}, "name"),
            ({"name": "a", "model": "gpt-4o", "colour": "red"}, "colour"),
            ({"name": "a", "model": "gpt-4o", "reserved_output_tokens": "100"}, "reserved_output_tokens"),
            ({"name": "a", "model": "gpt-4o", "warning_threshold": "high"}, "warning_threshold"),
            ({"name": "a", "model": "gpt-4o", "strategy": "truncate"}, "strategy"),
        ],
    )
    def test_malformed_input_names_the_field(self, api, body, field):
        response = api.post(url("agent-create"), body, format="json")
        assert response.status_code == 400 and field in response.json()
        assert not Agent.objects.exists()

    def test_unknown_fields_are_refused_as_the_schema_says(self, api):
        response = api.post(url("agent-create"), {"name": "a", "model": "gpt-4o", "": 1}, format="json")
        assert response.status_code == 400 and list(response.json()) == [""]
        assert_documented(response, "/api/agents/", "post")
        assert served_schema()["components"]["schemas"]["AgentCreateRequest"]["additionalProperties"] is False
        assert not Agent.objects.exists()

    def test_invalid_settings_are_explained(self, api):
        response = api.post(
            url("agent-create"),
            {"name": "a", "model": "gpt-4o", "compaction_trigger": 0.5, "compaction_target": 0.7},
            format="json",
        )
        assert response.status_code == 400 and "below" in response.json()["detail"]
        assert not Agent.objects.exists()

    def test_a_taken_name_conflicts(self, api):
        AgentFactory(name="planner")
        response = api.post(url("agent-create"), {"name": "planner", "model": "gpt-4o"}, format="json")
        assert response.status_code == 409

    def test_requires_authentication(self, db):
        response = APIClient().post(url("agent-create"), {"name": "a", "model": "gpt-4o"}, format="json")
        assert response.status_code in (401, 403)
        assert not Agent.objects.exists()


class TestAgentDetail:
    def test_reads_an_agent(self, api):
        agent = AgentFactory(name="planner")
        response = api.get(url("agent-detail", agent.pk))
        assert response.status_code == 200 and response.json()["name"] == "planner"

    def test_an_unknown_agent_is_not_found(self, api):
        assert api.get(url("agent-detail", 999)).status_code == 404
        assert api.patch(url("agent-detail", 999), {"model": "x"}, format="json").status_code == 404

    def test_updates_what_is_sent(self, api):
        agent = AgentFactory(turn_input_limit=2_000)

        body = {"turn_input_limit": None, "model": "gpt-4.1"}
        response = api.patch(url("agent-detail", agent.pk), body, format="json")

        assert response.status_code == 200
        assert response.json()["turn_input_limit"] is None and response.json()["model"] == "gpt-4.1"

    @pytest.mark.parametrize("body", [{}, {"compaction_target": 0.99}, {"window_turns": 1.5}, {"message_count": 0}])
    def test_a_bad_update_changes_nothing(self, api, body):
        agent = AgentFactory()
        before = stored(agent)
        response = api.patch(url("agent-detail", agent.pk), body, format="json")
        assert response.status_code == 400
        assert stored(agent) == before


class TestMessageAppend:
    def test_appends_a_message_with_its_token_count(self, api):
        agent = AgentFactory(model="gpt-4")

        response = api.post(
            url("messages", agent.pk),
            {"role": "user", "content": "hello there", "sender": "ops", "importance": 0.9},
            format="json",
        )

        assert response.status_code == 201
        body = response.json()
        assert (body["position"], body["token_count"], body["tokens_approximate"]) == (1, 6, False)
        assert body["sender"] == "ops" and body["importance"] == 0.9

    def test_tool_calls_and_results(self, api):
        agent = AgentFactory()

        def append(body: dict):
            return api.post(url("messages", agent.pk), body, format="json")

        calls = append({"role": "assistant", "tool_calls": [CALL]})
        early = append({"role": "user", "content": "well?"})
        result = append({"role": "tool", "tool_call_id": "call_1", "content": "42"})

        assert calls.status_code == 201 and calls.json()["tool_calls"] == [CALL]
        assert early.status_code == 400 and "call_1" in early.json()["detail"]
        assert result.status_code == 201 and result.json()["tool_name"] == "lookup"
        assert Message.objects.filter(agent=agent).count() == 2

    @pytest.mark.parametrize(
        "body",
        [
            {"role": "user", "content": "hi", "pinned": "yes"},
            {"role": "user", "content": "hi", "importance": "high"},
            {"role": "user", "content": 7},
            {"role": "robot", "content": "hi"},
            {"role": "user", "content": "x" * 100_001},
            {"role": "user", "content": "hi", "extra": 1},
        ],
    )
    def test_bad_messages_are_refused_and_nothing_is_written(self, api, body):
        agent = AgentFactory()
        response = api.post(url("messages", agent.pk), body, format="json")
        assert response.status_code == 400
        assert not Message.objects.exists()

    def test_an_unknown_agent_is_not_found(self, api):
        response = api.post(url("messages", 999), {"role": "user", "content": "hi"}, format="json")
        assert response.status_code == 404


class TestMessageList:
    def test_lists_the_conversation_newest_first_a_page_at_a_time(self, api):
        agent = AgentFactory()
        for number in range(1, 6):
            services.message_append(agent=agent, role="user", content=f"line {number}")
        services.message_append(agent=agent, role="assistant", content="Done.", data={"provider": "offline"})

        first = api.get(url("messages", agent.pk), {"page_size": 4})
        body = first.json()
        rest = api.get(body["next"]).json()

        assert first.status_code == 200
        assert_documented(first, "/api/agents/{agent_id}/messages/", "get")
        assert [message["position"] for message in body["results"]] == [6, 5, 4, 3]
        assert body["results"][0]["data"] == {"provider": "offline"} and body["results"][1]["data"] == {}
        assert [message["content"] for message in rest["results"]] == ["line 2", "line 1"] and rest["next"] is None

    def test_another_spaces_agent_is_not_found(self, api):
        assert api.get(url("messages", 999)).status_code == 404


class TestContext:
    def test_answers_the_messages_and_the_report(self, api):
        agent = AgentFactory(
            model="gpt-4",
            turn_input_limit=1_000,
            instructions="Help $user.",
            context_variables={"user": "Ada", "secret": "sk-HIDDEN"},
        )
        for _ in range(12):
            say(agent, 100)

        response = api.get(url("agent-context", agent.pk), {"strategy": "fifo"})

        assert response.status_code == 200
        body = response.json()
        assert body["messages"][0] == {"role": "system", "content": "Help Ada."}
        assert body["messages"][1] == {"role": "user", "content": words(96)}
        report = body["report"]
        assert report["window"] == 1_000 and report["compacted"] is True and report["exact"] is True
        assert report["total"] == sum(report["tiers"].values()) and report["free"] == 1_000 - report["total"]
        assert report["dropped"][0]["reason"] == "compaction" and report["dropped"][0]["detail"]
        assert "sk-HIDDEN" not in response.content.decode()

    def test_model_and_strategy_per_call(self, api):
        agent = AgentFactory(model="gpt-4")
        query = {"model": "gpt-4o", "strategy": "importance", "turns": 3}
        response = api.get(url("agent-context", agent.pk), query)
        report = response.json()["report"]
        assert (report["model"], report["strategy"], report["context_window"]) == ("gpt-4o", "importance", 128_000)

    def test_summarize_queues_the_summary_its_cut_wants_then_sends_it(
        self, api, monkeypatch, django_capture_on_commit_callbacks
    ):
        queued = []
        monkeypatch.setattr("agents.context.tasks.summary_write.delay", lambda summary_id: queued.append(summary_id))
        agent = AgentFactory(model="gpt-4", turn_input_limit=1_000)
        for _ in range(8):
            say(agent, 100)

        with django_capture_on_commit_callbacks(execute=True):
            report = api.get(url("agent-context", agent.pk), {"strategy": "summarize"}).json()["report"]

        assert report["summary"] is None and report["summary_wanted"] == 3
        assert [entry["reason"] for entry in report["dropped"]] == ["summary_pending"]
        [summary] = Summary.objects.all()
        assert queued == [summary.pk] and summary.through == 3
        services.summary_write(summary_id=summary.pk)

        body = api.get(url("agent-context", agent.pk), {"strategy": "summarize"}).json()

        assert body["report"]["summary"]["id"] == summary.pk and body["report"]["summary_wanted"] is None
        assert body["report"]["summary"]["provider"] == "offline"
        assert body["messages"][0]["content"].startswith("# Summary of the earlier conversation")
        assert [entry["reason"] for entry in body["report"]["dropped"]] == ["summarized"]

    def test_tool_messages_are_in_the_chat_apis_form(self, api):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", tool_calls=[CALL])
        services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="42")

        messages = api.get(url("agent-context", agent.pk)).json()["messages"]

        assert messages == [
            {"role": "assistant", "content": "", "tool_calls": [CALL]},
            {"role": "tool", "content": "42", "tool_call_id": "call_1"},
        ]

    @pytest.mark.parametrize("query", [{"strategy": "truncate"}, {"turns": "0"}, {"turns": "many"}])
    def test_bad_queries_are_refused(self, api, query):
        agent = AgentFactory()
        assert api.get(url("agent-context", agent.pk), query).status_code == 400

    def test_a_pinned_part_too_large_answers_422_with_the_numbers(self, api):
        agent = AgentFactory(model="gpt-4", turn_input_limit=50)
        say(agent, 60, pinned=True)

        response = api.get(url("agent-context", agent.pk))

        assert response.status_code == 422
        body = response.json()
        assert body["reason"] == "pinned" and (body["needed"], body["window"]) == (63, 50)
        assert "63" in body["detail"]

    def test_a_spent_conversation_budget_answers_422(self, api):
        agent = AgentFactory(model="gpt-4", conversation_token_budget=50)
        say(agent, 60)

        response = api.get(url("agent-context", agent.pk))

        assert response.status_code == 422
        assert response.json()["reason"] == "conversation_budget"
        assert (response.json()["conversation_tokens"], response.json()["conversation_token_budget"]) == (60, 50)

    def test_an_unknown_agent_is_not_found(self, api):
        assert api.get(url("agent-context", 999)).status_code == 404


class TestCheckpoints:
    def test_save_and_restore(self, api):
        agent = AgentFactory(model="gpt-4")
        say(agent, 20)
        created = api.post(url("checkpoint-create", agent.pk))
        say(agent, 30)
        api.patch(url("agent-detail", agent.pk), {"strategy": "importance"}, format="json")

        restored = api.post(url("checkpoint-restore", agent.pk, created.json()["id"]))

        assert created.status_code == 201
        assert (created.json()["version"], created.json()["message_count"]) == (1, 1)
        assert restored.status_code == 200
        assert restored.json()["message_count"] == 1 and restored.json()["strategy"] == "fifo"
        assert Message.objects.filter(agent=agent).count() == 1

    def test_unknown_and_foreign_checkpoints_are_not_found(self, api):
        agent, other = AgentFactory(), AgentFactory()
        foreign = services.checkpoint_create(agent=other)

        assert api.post(url("checkpoint-restore", agent.pk, 999)).status_code == 404
        assert api.post(url("checkpoint-restore", agent.pk, foreign.pk)).status_code == 404
        assert api.post(url("checkpoint-create", 999)).status_code == 404
        assert Checkpoint.objects.count() == 1


def test_every_agent_operation_is_in_the_schema(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    validate_schema(schema)
    operations = {(path, method) for path, item in schema["paths"].items() for method in item if method != "parameters"}
    agent = "/api/agents/{agent_id}"
    assert {
        ("/api/agents/", "post"),
        (f"{agent}/", "get"),
        (f"{agent}/", "patch"),
        (f"{agent}/messages/", "get"),
        (f"{agent}/messages/", "post"),
        (f"{agent}/context/", "get"),
        (f"{agent}/checkpoints/", "post"),
        (f"{agent}/checkpoints/{{checkpoint_id}}/restore/", "post"),
    } <= operations
    assert "422" in schema["paths"][f"{agent}/context/"]["get"]["responses"]


@pytest.mark.parametrize("name", ["agent-create", "agent-detail", "messages"])
def test_json_nested_too_deeply_is_400_and_writes_nothing(api, name):
    agent = AgentFactory()
    path = url(name) if name == "agent-create" else url(name, agent.pk)
    method = api.patch if name == "agent-detail" else api.post

    response = method(path, b"[" * 100_000 + b"]" * 100_000, content_type="application/json")

    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    assert list(Agent.objects.values_list("pk", flat=True)) == [agent.pk]
    assert not Message.objects.exists()
