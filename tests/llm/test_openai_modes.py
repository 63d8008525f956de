"""The openai provider's judgement of 400s and its memory of working modes, without a server."""

import httpx2  # the HTTP client the openai package is built on
import openai
import pytest

from memsite.llm.providers import openai as provider


def bad_request(message: str, *, param: str | None = None, code: str | None = None) -> openai.BadRequestError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    body = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return openai.BadRequestError(message, response=httpx2.Response(400, request=request), body=body)


@pytest.mark.parametrize(
    ("message", "param", "code"),
    [
        ("Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", None, None),
        ("Invalid schema: 'minimum' is not permitted.", "response_format", None),
        ("Unsupported value.", "response_format.json_schema.strict", None),
        ('response_format type must be one of "text" or "json_object", but got: json_schema', None, None),
        ("The provided JSON schema contains features not supported by xgrammar.", None, None),
        ("invalid JSON schema in format", None, None),
        ("guided_json is not supported with this decoding backend", None, None),
        ("json_object unsupported", None, None),
    ],
)
def test_refusals_of_the_response_format_are_recognised(message, param, code):
    assert provider.refuses_response_format(bad_request(message, param=param, code=code)) is True


@pytest.mark.parametrize(
    ("message", "param", "code"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, you requested 9001 tokens.",
            "messages",
            "context_length_exceeded",
        ),
        (
            "Unsupported parameter: 'max_tokens' is not supported with this model.",
            "max_tokens",
            "unsupported_parameter",
        ),
        ("temperature must be between 0 and 2", "temperature", None),
        ("the request exceeds the available context size, try increasing it", None, "exceed_context_size_error"),
        ("", None, None),
    ],
)
def test_other_bad_requests_are_not_refusals_of_the_response_format(message, param, code):
    assert provider.refuses_response_format(bad_request(message, param=param, code=code)) is False


def test_a_remembered_mode_is_only_replaced_by_one_at_least_as_strong():
    key = ("http://127.0.0.1/v1", "some-model")
    provider.remember_working_mode(key, provider.JSON_SCHEMA)
    provider.remember_working_mode(key, provider.JSON_OBJECT)
    provider.remember_working_mode(key, provider.PROMPT)
    assert provider._working_modes[key] == provider.JSON_SCHEMA

    other = ("http://127.0.0.1/v1", "other-model")
    provider.remember_working_mode(other, provider.PROMPT)
    provider.remember_working_mode(other, provider.JSON_OBJECT)
    assert provider._working_modes[other] == provider.JSON_OBJECT
