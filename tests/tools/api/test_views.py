"""GET /api/tools/openai.json and POST /api/tools/call/ end to end with a token: the definitions
a model is given, a call's result, and each refusal with the API's status and body, as the
OpenAPI schema documents them."""

import json

import jsonschema
import pytest
from rest_framework.test import APIClient

from memory.models import Node
from memsite.spaces.logic import Role
from tests.factories import DocumentFactory, NodeFactory, UserFactory, token_for
from tests.memory.api.support import tree_state
from tests.openapi import assert_documented, served_schema
from tools.registry import all_tools

pytestmark = pytest.mark.django_db

CALL = "/api/tools/call/"
OPENAI = "/api/tools/openai.json"


def client(role: Role = Role.EDITOR, **options) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(UserFactory(role=role), **options)}")
    return api


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return served_schema()


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def call(api: APIClient, name: str, arguments, **extra):
    return api.post(CALL, {"name": name, "arguments": arguments, **extra}, format="json")


def test_the_openai_definitions_are_served_to_any_member(schema):
    response = client(Role.READER).get(OPENAI)

    assert response.status_code == 200
    tools = response.json()["tools"]
    assert [tool["function"]["name"] for tool in tools] == [tool.name for tool in all_tools()]
    for tool in tools:
        assert tool["type"] == "function" and set(tool["function"]) == {"name", "description", "parameters"}
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    assert_documented(response, "/api/tools/openai.json", "get", schema)
    assert APIClient().get(OPENAI).status_code == 401


def test_a_call_writes_and_reads_back_through_the_api(schema):
    api = client()
    NodeFactory(name="nodes")

    written = call(api, "memory_write", {"parent": "/swarmstar/nodes", "name": "a.md", "content": "# A\n\nPort 8443."})
    read = call(api, "memory_read", {"node": "/swarmstar/nodes/a.md"})

    assert written.status_code == 200, written.content
    assert written.json()["name"] == "memory_write" and written.json()["result"]["created"] is True
    assert read.json()["result"]["content"] == "# A\n\nPort 8443."
    assert read.json()["result"]["node"]["id"] == written.json()["result"]["node"]["id"]
    assert_documented(written, "/api/tools/call/", "post", schema)


def test_arguments_may_be_json_text_as_a_model_writes_them():
    DocumentFactory(name="plan.md", content=b"The plan.")

    response = call(client(), "memory_read", json.dumps({"node": "/swarmstar/plan.md"}))

    assert response.status_code == 200 and response.json()["result"]["content"] == "The plan."


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"name": "memory_erase", "arguments": {}}, {"name"}),
        ({"arguments": {}}, {"name"}),
        ({"name": "memory_read", "arguments": "{not json"}, {"arguments"}),
        ({"name": "memory_read", "arguments": "[1, 2]"}, {"arguments"}),
        ({"name": "memory_read", "arguments": 5}, {"arguments"}),
        ({"name": "memory_read", "arguments": {}, "extra": 1}, {"extra"}),
    ],
)
def test_a_malformed_call_is_a_400_naming_the_field(schema, body, errors):
    response = client().post(CALL, body, format="json")

    assert response.status_code == 400, response.content
    assert errors <= set(response.json())
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_invalid_arguments_are_a_400_naming_each_one(schema):
    response = call(client(), "memory_read", {"node": "/user", "offset": -1, "limit": "all"})

    assert response.status_code == 400
    assert response.json() == {
        "detail": "Invalid arguments for memory_read; each is named.",
        "arguments": {
            "offset": ["Input should be greater than or equal to 0"],
            "limit": ["Input should be a valid integer"],
        },
    }
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_a_reader_token_is_refused_a_tool_that_writes(schema):
    before = tree_state()

    response = call(client(Role.READER), "memory_write", {"parent": "/user", "name": "a.md", "content": "x"})

    assert response.status_code == 403
    assert response.json() == {"detail": "Readers can only read; this needs an editor."}
    assert tree_state() == before
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_a_token_writes_only_under_its_folder(schema):
    NodeFactory(name="a")
    api = client(write_under="/swarmstar/a/")

    inside = call(api, "memory_write", {"parent": "/swarmstar/a", "name": "n.md", "content": "x"})
    outside = call(api, "memory_write", {"parent": "/user", "name": "n.md", "content": "x"})

    assert inside.status_code == 200 and outside.status_code == 403
    assert outside.json() == {"detail": "This token writes only under /swarmstar/a/."}
    assert not Node.objects.filter(parent__name="user", name="n.md").exists()


@pytest.mark.parametrize(
    ("name", "arguments", "status"),
    [
        ("memory_read", {"node": "/swarmstar/nowhere"}, 404),
        ("brain_state", {"agent": "nobody"}, 404),
        ("memory_write", {"parent": "/swarmstar", "name": "plan.md", "content": "x", "version": 7}, 409),
    ],
)
def test_a_service_s_refusal_keeps_its_status_and_body(schema, name, arguments, status):
    DocumentFactory(name="plan.md")

    response = call(client(), name, arguments)

    assert response.status_code == status, response.content
    assert set(response.json()) == {"detail"}
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_a_document_over_the_cap_is_a_413(schema, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 1_024

    response = call(client(), "memory_write", {"parent": "/swarmstar", "name": "big.md", "content": "x" * 1_025})

    assert response.status_code == 413
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_a_search_past_the_user_s_quota_is_a_429_with_the_numbers(schema, settings):
    settings.MEMSITE_QUOTA_SEARCHES = 1
    api = client()
    assert call(api, "memory_search", {"questions": ["Where?"], "wait_s": 0}).status_code == 200

    response = call(api, "memory_search", {"questions": ["Where?"], "wait_s": 0})

    assert response.status_code == 429 and response["Retry-After"]
    assert response.json()["quota"] == "MEMSITE_QUOTA_SEARCHES" and response.json()["cap"] == 1
    assert_documented(response, "/api/tools/call/", "post", schema)


def test_json_text_of_too_many_values_is_a_413():
    response = call(client(), "memory_read", "[" + "0," * 100_000 + "0]")

    assert response.status_code == 413 and "100,000 values" in response.json()["detail"]
