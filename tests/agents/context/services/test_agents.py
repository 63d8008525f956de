from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.brains.models import Brain, Goal, Record
from agents.brains.services.brains import brain_writing, goal_create
from agents.context import selectors, services
from agents.context.models import Agent, Checkpoint, Message, Summary
from agents.context.selectors import DeletionEffect
from agents.context.services.agents import SettingInvalid
from agents.graphs import services as graph_services
from agents.graphs.models import Graph
from memsite.errors import Conflict, InvalidInput
from tests.factories import AgentFactory, default_space

pytestmark = pytest.mark.django_db


class TestAgentCreate:
    def test_creates_an_agent_with_the_default_budgets(self):
        agent = services.agent_create(space=default_space(), name="planner", model="gpt-4o")

        agent.refresh_from_db()
        assert agent.name == "planner" and agent.model == "gpt-4o"
        assert agent.strategy == "fifo" and agent.window_turns == 20
        assert agent.reserved_output_tokens == 4_096
        assert agent.turn_input_limit is None and agent.conversation_token_budget is None
        assert (agent.warning_threshold, agent.compaction_trigger, agent.compaction_target) == (0.8, 0.9, 0.6)
        assert agent.message_count == 0 and agent.conversation_tokens == 0 and agent.pending_tool_calls == []

    def test_names_are_unique(self):
        AgentFactory(name="planner")
        with pytest.raises(Conflict):
            services.agent_create(space=default_space(), name="planner", model="gpt-4o")
        assert Agent.objects.count() == 1

    @pytest.mark.parametrize(
        "values",
        [
            {"compaction_target": 0.9, "compaction_trigger": 0.9},
            {"compaction_target": 0.95},
            {"warning_threshold": 0},
            {"compaction_trigger": 1.5},
            {"warning_threshold": True},
            {"strategy": "truncate"},
            {"window_turns": 0},
            {"reserved_output_tokens": "4096"},
            {"turn_input_limit": 0},
            {"conversation_token_budget": -1},
            {"context_variables": ["not", "an", "object"]},
            {"instructions": "Help $user_name."},
            {"instructions": "It costs $5."},
        ],
    )
    def test_refuses_invalid_settings(self, values):
        with pytest.raises(InvalidInput):
            services.agent_create(space=default_space(), name="planner", model="gpt-4o", **values)
        assert not Agent.objects.exists()

    @pytest.mark.parametrize(
        "values, field",
        [
            ({"compaction_target": 0.95}, "compaction_target"),
            ({"warning_threshold": 0}, "warning_threshold"),
            ({"strategy": "truncate"}, "strategy"),
            ({"window_turns": 0}, "window_turns"),
            ({"turn_input_limit": 0}, "turn_input_limit"),
            ({"context_variables": ["a"]}, "context_variables"),
            ({"instructions": "Help $user_name."}, "instructions"),
            ({"name": " "}, "name"),
        ],
    )
    def test_a_refused_setting_names_its_field(self, values, field):
        settings = {"name": "planner", **values}
        with pytest.raises(SettingInvalid) as refused:
            services.agent_create(space=default_space(), model="gpt-4o", **settings)
        assert refused.value.field == field and refused.value.status == 400

    def test_instructions_may_name_context_variables_and_escape_dollars(self):
        agent = services.agent_create(
            space=default_space(),
            name="helper",
            model="gpt-4o",
            instructions="Help ${user_name} with $task; it costs $$5.",
            context_variables={"user_name": "Ada", "task": "billing", "api_key": "secret"},
        )
        assert agent.instructions.startswith("Help ${user_name}")

    def test_the_database_keeps_the_target_below_the_trigger(self):
        agent = AgentFactory()
        with pytest.raises(IntegrityError), transaction.atomic():
            Agent.objects.filter(pk=agent.pk).update(compaction_target=0.95)

    def test_the_database_keeps_thresholds_within_the_window(self):
        agent = AgentFactory()
        with pytest.raises(IntegrityError), transaction.atomic():
            Agent.objects.filter(pk=agent.pk).update(warning_threshold=1.2)


class TestAgentUpdate:
    def test_changes_only_what_is_sent(self):
        agent = AgentFactory(model="gpt-4o", turn_input_limit=2_000)

        agent = services.agent_update(agent=agent, changes={"model": "gpt-4.1", "strategy": "importance"})

        agent.refresh_from_db()
        assert agent.model == "gpt-4.1" and agent.strategy == "importance" and agent.turn_input_limit == 2_000

    def test_null_clears_an_optional_budget(self):
        agent = AgentFactory(turn_input_limit=2_000, conversation_token_budget=50_000)

        services.agent_update(agent=agent, changes={"turn_input_limit": None, "conversation_token_budget": None})

        agent.refresh_from_db()
        assert agent.turn_input_limit is None and agent.conversation_token_budget is None

    def test_checks_the_settings_together(self):
        agent = AgentFactory()
        with pytest.raises(InvalidInput, match="below"):
            services.agent_update(agent=agent, changes={"compaction_target": 0.95})
        services.agent_update(agent=agent, changes={"compaction_trigger": 0.99, "compaction_target": 0.95})

    def test_refuses_to_drop_a_variable_the_instructions_use(self):
        agent = AgentFactory(instructions="Hi $name.", context_variables={"name": "Ada"})

        with pytest.raises(InvalidInput, match=r"\$name"):
            services.agent_update(agent=agent, changes={"context_variables": {}})

        agent.refresh_from_db()
        assert agent.context_variables == {"name": "Ada"}

    @pytest.mark.parametrize("changes", [{}, {"message_count": 0}, {"id": 7}])
    def test_refuses_nothing_and_what_is_not_a_setting(self, changes):
        with pytest.raises(InvalidInput):
            services.agent_update(agent=AgentFactory(), changes=changes)

    def test_settings_read_before_a_change_are_refused(self):
        agent = AgentFactory(model="gpt-4o")
        read_at = agent.updated_at
        services.agent_update(agent=agent, changes={"model": "gpt-4.1"})

        with pytest.raises(Conflict, match="after these settings were read"):
            services.agent_update(agent=agent, changes={"model": "gpt-4"}, unchanged_since=read_at)

        agent.refresh_from_db()
        assert agent.model == "gpt-4.1"
        services.agent_update(agent=agent, changes={"model": "gpt-4"}, unchanged_since=agent.updated_at)
        assert Agent.objects.get(pk=agent.pk).model == "gpt-4"

    def test_a_time_other_than_the_last_change_conflicts(self):
        agent = AgentFactory()
        with pytest.raises(Conflict):
            services.agent_update(
                agent=agent, changes={"model": "gpt-4o"}, unchanged_since=agent.updated_at + timedelta(seconds=1)
            )

    def test_renaming_onto_another_agent_conflicts(self):
        AgentFactory(name="taken")
        agent = AgentFactory(name="mine")
        with pytest.raises(Conflict):
            services.agent_update(agent=agent, changes={"name": "taken"})
        agent.refresh_from_db()
        assert agent.name == "mine"


def agent_with_everything() -> Agent:
    """An agent with 3 messages, a checkpoint, a summary, a brain with records and a goal, and
    a reasoning graph."""
    agent = AgentFactory()
    for text in ("one", "two", "three"):
        services.message_append(agent=agent, role="user", content=text)
    services.checkpoint_create(agent=agent)
    Summary.objects.create(agent=agent, through=1, status=Summary.Status.DONE, content="They counted.")
    with brain_writing(agent=agent) as brain:
        brain.record(kind="thought", text="A thought.", item={}, at=timezone.now())
        brain.record(kind="fact", text="A fact.", item={}, at=timezone.now())
    goal_create(agent=agent, text="Count to four.")
    graph_services.graph_create(space=default_space(), task="Count.", agent=agent, model="gpt-4")
    return agent


class TestAgentDelete:
    def test_says_what_goes_and_what_stays_without_changing_anything(self):
        agent = agent_with_everything()

        effects = {effect.model: effect for effect in selectors.agent_deletion(agent=agent)}

        assert effects["context.message"] == DeletionEffect("context.message", 3, deleted=True)
        assert effects["context.checkpoint"].count == 1 and effects["context.summary"].count == 1
        assert effects["brains.brain"].count == 1
        assert effects["brains.record"].count == Record.objects.filter(brain_id=agent.pk).count() >= 2
        assert effects["brains.goal"].count == 1
        assert effects["graphs.graph"] == DeletionEffect("graphs.graph", 1, deleted=False)
        assert "brains.tickrun" not in effects  # none to delete: not mentioned
        assert Message.objects.filter(agent=agent).count() == 3

    def test_deletes_the_agent_and_everything_of_its_own_but_keeps_its_graphs(self):
        agent = agent_with_everything()
        other = AgentFactory()
        services.message_append(agent=other, role="user", content="mine")

        services.agent_delete(agent=agent)

        assert list(Agent.objects.all()) == [other]
        assert list(Message.objects.values_list("content", flat=True)) == ["mine"]
        assert not Checkpoint.objects.exists() and not Summary.objects.exists()
        assert not Brain.objects.exists() and not Record.objects.exists() and not Goal.objects.exists()
        assert Graph.objects.get().agent is None
