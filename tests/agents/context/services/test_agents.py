import pytest
from django.db import IntegrityError, transaction

from agents.context import services
from agents.context.models import Agent
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

    def test_renaming_onto_another_agent_conflicts(self):
        AgentFactory(name="taken")
        agent = AgentFactory(name="mine")
        with pytest.raises(Conflict):
            services.agent_update(agent=agent, changes={"name": "taken"})
        agent.refresh_from_db()
        assert agent.name == "mine"
