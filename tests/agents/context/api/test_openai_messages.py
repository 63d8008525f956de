"""Messages as the OpenAI SDK and OpenAI Swarm produce them: posted as they are, stored, and
assembled into messages the Chat Completions API takes."""

import pytest
from django.urls import reverse
from openai.types.chat import ChatCompletionAudio, ChatCompletionMessage
from openai.types.chat.chat_completion_message import (
    Annotation,
    AnnotationURLCitation,
    FunctionCall,
)
from openai.types.chat.chat_completion_message_custom_tool_call import (
    ChatCompletionMessageCustomToolCall,
    Custom,
)
from openai.types.chat.chat_completion_message_function_tool_call import (
    ChatCompletionMessageFunctionToolCall,
    Function,
)

from agents.context.logic.wire import IMAGE_TOKENS_LOW
from agents.context.models import Agent, Message
from tests.agents.support import assert_chat_request_messages, stored
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def lookup_call(call_id: str, name: str = "lookup", arguments: str = '{"q": "deploy"}'):
    return ChatCompletionMessageFunctionToolCall(
        id=call_id, type="function", function=Function(name=name, arguments=arguments)
    )


def reply(**fields) -> dict:
    """What the SDK's `message.model_dump()` gives for a reply with these fields."""
    return ChatCompletionMessage(role="assistant", **fields).model_dump()


@pytest.fixture
def agent():
    return AgentFactory(model="gpt-4", instructions="You help $user.", context_variables={"user": "Ada"})


@pytest.fixture
def post(api, agent):
    def post(body: dict):
        return api.post(reverse("agents-api:messages", args=[agent.pk]), body, format="json")

    return post


def context(api, agent) -> list[dict]:
    response = api.get(reverse("agents-api:agent-context", args=[agent.pk]))
    assert response.status_code == 200
    return response.json()["messages"]


class TestSdkReplies:
    def test_a_tool_call_reply_with_null_content_and_its_result(self, api, agent, post):
        dumped = reply(content=None, tool_calls=[lookup_call("call_1")])
        assert dumped["content"] is None and dumped["refusal"] is None and dumped["audio"] is None

        calls = post(dumped)
        result = post({"role": "tool", "tool_call_id": "call_1", "content": "port 8443"})

        assert calls.status_code == 201, calls.json()
        assert result.status_code == 201 and result.json()["tool_name"] == "lookup"
        stored_call = Message.objects.get(agent=agent, position=1)
        assert stored_call.content == "" and stored_call.tool_calls == dumped["tool_calls"]
        assert (stored_call.refusal, stored_call.audio, stored_call.annotations) == ("", {}, [])
        messages = context(api, agent)
        assert messages[1:] == [
            {"role": "assistant", "content": "", "tool_calls": dumped["tool_calls"]},
            {"role": "tool", "content": "port 8443", "tool_call_id": "call_1"},
        ]
        assert_chat_request_messages(messages)

    def test_a_plain_reply_with_null_tool_calls(self, api, agent, post):
        dumped = reply(content="The deploy script is in /ops.")
        assert dumped["tool_calls"] is None and dumped["function_call"] is None

        response = post(dumped)

        assert response.status_code == 201
        assert response.json()["content"] == "The deploy script is in /ops."
        assert response.json()["tool_calls"] == [] and response.json()["function_call"] == {}
        assert context(api, agent)[1] == {
            "role": "assistant",
            "content": "The deploy script is in /ops.",
        }

    def test_a_refusal_is_kept_and_sent_back(self, api, agent, post):
        response = post(reply(content=None, refusal="I can't help with that."))

        assert response.status_code == 201 and response.json()["refusal"] == "I can't help with that."
        messages = context(api, agent)
        assert messages[1] == {
            "role": "assistant",
            "content": "",
            "refusal": "I can't help with that.",
        }
        assert_chat_request_messages(messages)

    def test_annotations_are_kept_to_show_and_never_sent(self, api, agent, post):
        citation = AnnotationURLCitation(start_index=4, end_index=20, title="Runbook", url="https://ops.example/run")
        dumped = reply(
            content="See the runbook.",
            annotations=[Annotation(type="url_citation", url_citation=citation)],
        )

        response = post(dumped)

        assert response.status_code == 201 and response.json()["annotations"] == dumped["annotations"]
        messages = context(api, agent)
        assert messages[1] == {"role": "assistant", "content": "See the runbook."}
        assert_chat_request_messages(messages)

    def test_an_audio_reply_keeps_its_id_and_transcript_and_is_sent_back_by_its_id(self, api, agent, post):
        audio = ChatCompletionAudio(
            id="audio_1", data="UklGRiQAAABXQVZF", expires_at=1_900_000_000, transcript="Hi Ada"
        )

        response = post(reply(content=None, audio=audio))

        assert response.status_code == 201
        message = Message.objects.get(agent=agent)
        assert message.audio == {
            "id": "audio_1",
            "expires_at": 1_900_000_000,
            "transcript": "Hi Ada",
        }
        assert message.tokens_approximate is True  # the audio's own tokens are not known here
        messages = context(api, agent)
        assert messages[1] == {"role": "assistant", "content": "", "audio": {"id": "audio_1"}}
        assert_chat_request_messages(messages)

    def test_a_custom_tool_call_and_the_older_function_call(self, api, agent, post):
        custom = ChatCompletionMessageCustomToolCall(
            id="call_c", type="custom", custom=Custom(name="grep", input="deploy")
        )
        legacy = reply(content=None, function_call=FunctionCall(name="lookup", arguments="{}"))

        responses = [
            post(reply(content=None, tool_calls=[custom])),
            post({"role": "tool", "tool_call_id": "call_c", "content": "ops/deploy.sh"}),
            post(legacy),
            post({"role": "function", "name": "lookup", "content": "port 8443"}),
        ]

        assert [response.status_code for response in responses] == [201] * 4
        assert Agent.objects.get(pk=agent.pk).pending_tool_calls == []
        messages = context(api, agent)
        assert messages[3] == {
            "role": "assistant",
            "content": "",
            "function_call": {"name": "lookup", "arguments": "{}"},
        }
        assert messages[4] == {"role": "function", "content": "port 8443", "name": "lookup"}
        assert_chat_request_messages(messages)


def test_a_swarm_history_is_stored_and_assembled_into_valid_request_messages(api, agent, post):
    """The shapes `Swarm.run` and `Swarm.run_and_stream` put in their history: the SDK's reply
    dumped with the agent's name as `sender`, tool results with `tool_name`, and a streamed
    reply merged from chunks, with nulls for what it did not use."""
    transfer = reply(content=None, tool_calls=[lookup_call("call_t", "transfer_to_sales", "{}")])
    history = [
        {"role": "user", "content": "I want to buy a licence."},
        {**transfer, "sender": "Triage Agent"},
        {
            "role": "tool",
            "tool_call_id": "call_t",
            "tool_name": "transfer_to_sales",
            "content": '{"assistant": "Sales Agent"}',
        },
        {**reply(content="Happy to help: how many seats?"), "sender": "Sales Agent"},
        {"role": "user", "content": "Ten."},
        {
            "content": "",
            "sender": "Sales Agent",
            "role": "assistant",
            "function_call": None,
            "tool_calls": [
                {
                    "function": {"arguments": '{"seats": 10}', "name": "quote"},
                    "id": "call_q",
                    "type": "function",
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_q", "tool_name": "quote", "content": "4,000 EUR"},
        {
            "content": "Ten seats cost 4,000 EUR.",
            "sender": "Sales Agent",
            "role": "assistant",
            "function_call": None,
            "tool_calls": None,
        },
    ]

    statuses = [post(message).status_code for message in history]

    assert statuses == [201] * len(history)
    rows = Message.objects.filter(agent=agent).order_by("position")
    assert [row.sender for row in rows] == [
        "",
        "Triage Agent",
        "",
        "Sales Agent",
        "",
        "Sales Agent",
        "",
        "Sales Agent",
    ]
    assert [row.tool_name for row in rows if row.role == "tool"] == ["transfer_to_sales", "quote"]
    messages = context(api, agent)
    assert messages[0] == {"role": "system", "content": "You help Ada."}
    assert [message["role"] for message in messages[1:]] == [message["role"] for message in history]
    assert all("sender" not in message and "tool_name" not in message for message in messages)
    assert_chat_request_messages(messages)


def test_content_parts_are_stored_counted_and_sent_as_parts(api, agent, post):
    parts = [
        {"type": "text", "text": "What is on this dashboard?"},
        {
            "type": "image_url",
            "image_url": {"url": "https://ops.example/dash.png", "detail": "low"},
        },
    ]
    text_only = post({"role": "user", "content": [{"type": "text", "text": "What is on this dashboard?"}]})

    response = post({"role": "user", "content": parts, "name": "ada"})

    assert text_only.status_code == 201 and response.status_code == 201
    body = response.json()
    assert body["content"] == "What is on this dashboard?" and body["content_parts"] == parts
    # The image costs its documented fixed cost; the name costs its text and one token more.
    assert body["token_count"] == text_only.json()["token_count"] + IMAGE_TOKENS_LOW + 2
    assert body["tokens_approximate"] is True
    messages = context(api, agent)
    assert messages[2] == {"role": "user", "content": parts, "name": "ada"}
    assert_chat_request_messages(messages)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"role": "user", "content": "hi", "colour": "red"}, "colour"),
        ({**reply(content="hi"), "logprobs": None}, "logprobs"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                        "index": 0,
                    }
                ],
            },
            "index",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}", "strict": True},
                    }
                ],
            },
            "strict",
        ),
        (
            {"role": "assistant", "content": None, "audio": {"id": "audio_1", "voice": "alloy"}},
            "voice",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": "{}", "id": "x"},
            },
            "id",
        ),
        (
            {
                "role": "assistant",
                "content": "hi",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "start_index": 0,
                            "end_index": 1,
                            "title": "t",
                            "url": "u",
                            "favicon": "f",
                        },
                    }
                ],
            },
            "favicon",
        ),
        ({"role": "user", "content": [{"type": "text", "text": "hi", "lang": "en"}]}, "lang"),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "u", "size": 3}}],
            },
            "size",
        ),
    ],
)
def test_unknown_fields_are_refused_by_name_and_nothing_is_stored(api, agent, post, body, named):
    before = stored(agent)

    response = post(body)

    assert response.status_code == 400
    assert named in str(response.json())
    assert stored(agent) == before


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            {"role": "user", "content": "hi", "refusal": "no"},
            "refusal belongs to assistant messages",
        ),
        ({"role": "tool", "tool_call_id": "c", "content": "42", "name": "f"}, "name belongs to"),
        (
            {"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            'content[0].type must be "text"',
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "max"}}],
            },
            "detail must be",
        ),
        ({"role": "function", "name": "lookup", "content": "42"}, "made none"),
        ({"role": "function", "content": "42"}, "needs the name"),
        ({"role": "assistant", "content": None}, "needs content"),
        (
            {
                "role": "assistant",
                "content": None,
                "audio": {"id": "a", "data": "x"},
                "function_call": {"name": "f"},
                "tool_calls": [{"id": "c", "function": {"name": "f"}}],
            },
            "not both",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": "x"}] * 65},
            "at most 64 content parts",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": "x" * 60_000}] * 2},
            "longer than 100000 characters",
        ),
        ({"role": "assistant", "content": None, "refusal": "x" * 100_001}, "refusal"),
        (
            {
                "role": "assistant",
                "content": None,
                "audio": {"id": "a", "transcript": "x" * 100_001},
            },
            "audio.transcript must be a string of at most 100000",
        ),
        (
            {
                "role": "assistant",
                "content": "hi",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "start_index": 0,
                            "end_index": 1,
                            "title": "t",
                            "url": "u",
                        },
                    }
                ]
                * 65,
            },
            "at most 64 annotations",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": "x" * 100_001},
            },
            "function_call is longer than 100000",
        ),
    ],
)
def test_fields_on_the_wrong_role_or_over_their_caps_are_refused(api, agent, post, body, fragment):
    before = stored(agent)

    response = post(body)

    assert response.status_code == 400
    assert fragment in str(response.json()), response.json()
    assert stored(agent) == before
