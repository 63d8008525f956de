"""The gateway through the real openai client against the fake server."""

import time

import pytest
from pydantic import BaseModel, Field

from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from tests.factories import system
from tests.fake_openai import Reply

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"role": "system", "content": "You pick where a search goes next."},
    {"role": "user", "content": "Query: postgres notes\n1. [memory_a] CSS\n2. [memory_b] Postgres"},
]
GOOD = {"choice": 2, "reason": "Postgres matches the query."}


class RouteChoice(BaseModel):
    choice: int = Field(ge=1, le=2)
    reason: str


def test_valid_structured_reply(openai_llm):
    openai_llm.script(Reply.json(GOOD, usage={"prompt_tokens": 41, "completion_tokens": 9, "total_tokens": 50}))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value == RouteChoice(**GOOD)
    assert result.usage.prompt_tokens == 41 and result.usage.completion_tokens == 9
    assert result.usage.reported is True
    request = openai_llm.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.response_format == "json_schema"
    assert request.body["response_format"]["json_schema"]["name"] == "RouteChoice"
    assert request.messages == MESSAGES
    call = LLMCall.objects.get()
    assert call == result.call
    assert (call.purpose, call.provider, call.model, call.status) == ("route", "openai", "gpt-4o-mini", "ok")
    assert (call.prompt_tokens, call.completion_tokens, call.tokens_reported) == (41, 9, True)
    assert (call.retries, call.repairs, call.response_mode) == (0, 0, "json_schema")
    assert call.schema_name == "RouteChoice"
    assert call.messages == MESSAGES
    assert call.reply == openai_llm.responses[0]["choices"][0]["message"]["content"]
    # gpt-4o-mini: $0.15 in, $0.60 out per million tokens.
    assert float(call.cost_usd) == pytest.approx((41 * 0.15 + 9 * 0.60) / 1e6)
    assert call.error == "" and call.error_reason == ""


def test_text_reply_without_schema(openai_llm):
    openai_llm.script(Reply.text("Postgres lives under memory_b."))

    result = complete(by=system(), purpose="chat", messages=MESSAGES)

    assert result.value == result.text == "Postgres lives under memory_b."
    assert "response_format" not in openai_llm.requests[0].body
    assert LLMCall.objects.get().response_mode == "text"


@pytest.mark.parametrize("reply", [Reply.prose(GOOD), Reply.fenced(GOOD)], ids=["prose", "fenced"])
def test_json_wrapped_in_prose_or_fences_is_extracted(openai_llm, reply):
    openai_llm.script(reply)

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value == RouteChoice(**GOOD)
    assert len(openai_llm.requests) == 1
    call = LLMCall.objects.get()
    assert call.status == "ok" and call.repairs == 0
    assert call.reply == reply.content


def test_invalid_json_then_a_valid_repair(openai_llm):
    openai_llm.script(Reply.text('{"choice": 2, "reason": "unterminated'), Reply.json(GOOD))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value == RouteChoice(**GOOD)
    repair_request = openai_llm.requests[1]
    assert repair_request.messages[: len(MESSAGES)] == MESSAGES
    assert repair_request.messages[-2] == {"role": "assistant", "content": '{"choice": 2, "reason": "unterminated'}
    assert "no JSON" in repair_request.messages[-1]["content"]
    call = LLMCall.objects.get()
    assert (call.status, call.repairs, call.retries) == ("ok", 1, 0)
    auto_usage = [response["usage"] for response in openai_llm.responses]
    assert call.prompt_tokens == sum(usage["prompt_tokens"] for usage in auto_usage)
    assert call.completion_tokens == sum(usage["completion_tokens"] for usage in auto_usage)
    assert call.messages == repair_request.messages


def test_schema_invalid_then_repaired_with_the_validation_error(openai_llm):
    openai_llm.script(Reply.json({"choice": 7}), Reply.json(GOOD))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value.choice == 2
    feedback = openai_llm.requests[1].messages[-1]["content"]
    assert "choice" in feedback and "less than or equal to 2" in feedback
    assert "reason" in feedback and "Field required" in feedback
    assert LLMCall.objects.get().repairs == 1


def test_repairs_exhausted_raise_llm_error_and_record_the_failure(openai_llm, settings):
    settings.MEMSITE_LLM_MAX_REPAIRS = 2
    openai_llm.script(Reply.json({"choice": 9}), Reply.text("no idea"), Reply.json({"choice": "x"}))

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert raised.value.reason == Reason.INVALID_REPLY
    assert len(openai_llm.requests) == 3
    call = LLMCall.objects.get()
    assert raised.value.call == call
    assert (call.status, call.error_reason, call.repairs) == ("error", "invalid_reply", 2)
    assert "after 2 repairs" in call.error
    assert call.reply == '{"choice": "x"}'
    assert call.prompt_tokens > 0 and call.completion_tokens > 0


def test_json_schema_refused_falls_back_to_json_mode_and_remembers(openai_llm):
    openai_llm.script(Reply.reject_json_schema(), Reply.json(GOOD), Reply.json(GOOD))

    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)
    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    formats = [request.response_format for request in openai_llm.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    # JSON mode gets the schema in the system message instead.
    instructions = openai_llm.requests[1].messages[0]
    assert instructions["role"] == "system"
    assert "JSON schema" in instructions["content"] and '"choice"' in instructions["content"]
    first, second = LLMCall.objects.order_by("id")
    assert (first.status, first.response_mode, first.retries) == ("ok", "json_object", 0)
    assert second.response_mode == "json_object"


def test_json_mode_refused_too_falls_back_to_the_prompt(openai_llm):
    openai_llm.script(Reply.reject_json_schema(), Reply.failure(400, "json_object unsupported"), Reply.prose(GOOD))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value == RouteChoice(**GOOD)
    assert [request.response_format for request in openai_llm.requests] == ["json_schema", "json_object", None]
    assert LLMCall.objects.get().response_mode == "prompt"


def test_bad_request_without_schema_is_an_llm_error(openai_llm):
    openai_llm.script(Reply.failure(400, "context_length_exceeded"))

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="chat", messages=MESSAGES)

    assert raised.value.reason == Reason.BAD_REQUEST
    assert "context_length_exceeded" in raised.value.message
    assert LLMCall.objects.get().error_reason == "bad_request"


def test_429_with_retry_after_is_honoured_then_succeeds(openai_llm):
    openai_llm.script(Reply.rate_limited(retry_after="0.3"), Reply.json(GOOD))

    started = time.monotonic()
    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)
    elapsed = time.monotonic() - started

    assert result.value == RouteChoice(**GOOD)
    assert elapsed >= 0.3  # the backoff alone is at most 5 ms in tests
    assert len(openai_llm.requests) == 2
    call = LLMCall.objects.get()
    assert (call.status, call.retries, call.repairs) == ("ok", 1, 0)
    assert call.latency_ms >= 300


def test_repeated_500_ends_in_llm_error(openai_llm, settings):
    settings.MEMSITE_LLM_MAX_RETRIES = 3
    openai_llm.script(*[Reply.failure(500, "upstream exploded")] * 4)

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="summarize", messages=MESSAGES, schema=RouteChoice)

    assert raised.value.reason == Reason.SERVER_ERROR
    assert "upstream exploded" in raised.value.message
    assert len(openai_llm.requests) == 4  # the first try and three retries: the client adds none
    call = LLMCall.objects.get()
    assert (call.status, call.error_reason, call.retries) == ("error", "server_error", 3)
    assert (call.prompt_tokens, call.completion_tokens, call.reply) == (0, 0, "")
    assert call.messages == MESSAGES


def test_500_then_success_counts_the_retry(openai_llm):
    openai_llm.script(Reply.failure(503, "busy"), Reply.failure(502), Reply.json(GOOD))

    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert LLMCall.objects.get().retries == 2


def test_slow_reply_hits_the_timeout(openai_llm, settings):
    settings.MEMSITE_LLM_REQUEST_TIMEOUT_MS = 200
    settings.MEMSITE_LLM_TIMEOUT_MS = 500
    openai_llm.script(*[Reply.slow(3.0, '{"choice": 2, "reason": "late"}')] * 4)

    started = time.monotonic()
    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)
    elapsed = time.monotonic() - started

    assert raised.value.reason == Reason.TIMEOUT
    assert elapsed < 1.5
    call = LLMCall.objects.get()
    assert (call.status, call.error_reason) == ("error", "timeout")
    assert call.retries >= 1  # a timed-out request is retried while the deadline allows
    assert 200 <= call.latency_ms < 1500


def test_connection_refused_is_retried_then_an_llm_error(openai_llm, settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="chat", messages=MESSAGES)

    assert raised.value.reason == Reason.CONNECTION
    assert LLMCall.objects.get().retries == 3


def test_authentication_error_is_not_retried(openai_llm):
    openai_llm.script(Reply.failure(401, "bad key"))

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="chat", messages=MESSAGES)

    assert raised.value.reason == Reason.AUTHENTICATION
    assert len(openai_llm.requests) == 1


def test_missing_usage_is_counted_and_flagged(openai_llm):
    openai_llm.script(Reply.json(GOOD, usage=None))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.usage.reported is False
    call = LLMCall.objects.get()
    assert call.tokens_reported is False
    # gpt-4o-mini uses o200k_base, which is not on this machine: the count is approximate.
    assert call.tokens_approximate is True
    assert call.prompt_tokens > 0 and call.completion_tokens > 0


def test_model_per_purpose(openai_llm, settings):
    settings.MEMSITE_LLM_PURPOSE_MODELS = {"deep_reflect": "gpt-4.1"}
    openai_llm.script(Reply.text("a"), Reply.text("b"))

    complete(by=system(), purpose="deep_reflect", messages=MESSAGES)
    complete(by=system(), purpose="reflect", messages=MESSAGES)

    assert [request.body["model"] for request in openai_llm.requests] == ["gpt-4.1", "gpt-4o-mini"]
    assert list(LLMCall.objects.order_by("id").values_list("model", flat=True)) == ["gpt-4.1", "gpt-4o-mini"]


def test_served_row_is_linked(openai_llm, user):
    openai_llm.script(Reply.text("ok"))

    result = complete(by=system(), purpose="chat", messages=MESSAGES, served=user)

    assert result.call.served == user


CONTEXT_TOO_LONG = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9001 tokens. Please reduce the length of the messages."
)


def test_a_400_not_about_the_response_format_ends_at_once(openai_llm):
    openai_llm.script(Reply.failure(400, CONTEXT_TOO_LONG), Reply.json(GOOD), Reply.json(GOOD))

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert raised.value.reason == Reason.BAD_REQUEST
    assert "maximum context length is 8192 tokens" in raised.value.message
    assert len(openai_llm.requests) == 1
    call = LLMCall.objects.get()
    assert raised.value.call == call
    assert (call.status, call.error_reason, call.response_mode) == ("error", "bad_request", "json_schema")
    assert (call.retries, call.repairs) == (0, 0)
    assert "maximum context length" in call.error
    # Nothing was learnt about the server: the next call still asks for the JSON schema.
    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)
    assert openai_llm.requests[1].response_format == "json_schema"


def test_a_400_about_another_parameter_in_json_mode_ends_at_once(openai_llm):
    openai_llm.script(Reply.reject_json_schema(), Reply.json(GOOD))
    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)  # json_object remembered
    openai_llm.script(Reply.failure(400, "max_tokens must be at least 1, got -5."))

    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert raised.value.reason == Reason.BAD_REQUEST
    assert [request.response_format for request in openai_llm.requests] == ["json_schema", "json_object", "json_object"]
    assert LLMCall.objects.order_by("id").last().response_mode == "json_object"


@pytest.mark.parametrize(
    "message",
    [
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        'response_format type must be one of "text" or "json_object", but got: json_schema',
        "The provided JSON schema contains features not supported by xgrammar.",
        "Structured outputs are not supported by this backend.",
    ],
    ids=["openai", "llama.cpp", "vllm", "structured-outputs"],
)
def test_a_400_about_the_response_format_falls_back(openai_llm, message):
    openai_llm.script(Reply.failure(400, message), Reply.json(GOOD))

    result = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    assert result.value == RouteChoice(**GOOD)
    assert [request.response_format for request in openai_llm.requests] == ["json_schema", "json_object"]
    assert LLMCall.objects.get().response_mode == "json_object"


def test_a_remembered_json_schema_mode_is_not_downgraded(openai_llm):
    schema_refused = "Invalid schema for response_format 'RouteChoice': 'minimum' is not permitted."
    openai_llm.script(Reply.json(GOOD), Reply.failure(400, schema_refused), Reply.json(GOOD), Reply.json(GOOD))

    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)  # json_schema works here
    second = complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)  # refused once
    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)

    formats = [request.response_format for request in openai_llm.requests]
    assert formats == ["json_schema", "json_schema", "json_object", "json_schema"]
    assert second.call.response_mode == "json_object"
    assert list(LLMCall.objects.order_by("id").values_list("response_mode", flat=True)) == [
        "json_schema",
        "json_object",
        "json_schema",
    ]


def test_working_modes_are_kept_per_server_and_model(openai_llm, settings):
    settings.MEMSITE_LLM_PURPOSE_MODELS = {"deep_reflect": "gpt-4.1"}
    openai_llm.script(Reply.reject_json_schema(), Reply.json(GOOD), Reply.json(GOOD))

    complete(by=system(), purpose="route", messages=MESSAGES, schema=RouteChoice)  # gpt-4o-mini: json_object
    complete(by=system(), purpose="deep_reflect", messages=MESSAGES, schema=RouteChoice)  # gpt-4.1: untouched

    assert [request.response_format for request in openai_llm.requests] == ["json_schema", "json_object", "json_schema"]
