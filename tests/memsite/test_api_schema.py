import pytest
from rest_framework.test import APIClient

from memsite.pagination import CheckedCursorPagination, OrderedPagination
from tests.factories import AgentFactory
from tests.openapi import assert_documented, served_schema

pytestmark = pytest.mark.django_db
ORDERED_PAGES = ("/api/agents/", "/api/graphs/", "/api/spaces/")  # paginated by OrderedPagination


def operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield path, method, operation


def test_every_operation_documents_the_refusals_of_the_framework():
    schema = served_schema()
    for path, method, operation in operations(schema):
        assert {"401", "429"} <= set(operation["responses"]), (path, method)
        body = operation.get("requestBody", {}).get("content", {})
        if body and "*/*" not in body:
            assert "415" in operation["responses"], (path, method)


def test_a_raw_body_takes_any_media_type_so_it_documents_no_415():
    content_write = served_schema()["paths"]["/api/nodes/{node_id}/content/"]["put"]
    assert "415" not in content_write["responses"]


def test_anonymous_and_throttled_requests_get_the_documented_refusals(api, settings):
    schema = served_schema()  # before the rate limit is lowered: the schema's page counts too
    agent = AgentFactory()
    anonymous = APIClient().get(f"/api/agents/{agent.pk}/")
    assert anonymous.status_code == 401
    assert_documented(anonymous, "/api/agents/{agent_id}/", "get", schema)

    settings.MEMSITE_API_RATE = "1/min"
    assert api.get(f"/api/agents/{agent.pk}/").status_code == 200
    throttled = api.get(f"/api/agents/{agent.pk}/")
    assert throttled.status_code == 429
    assert_documented(throttled, "/api/agents/{agent_id}/", "get", schema)


def test_every_page_size_is_documented_with_the_bounds_it_is_checked_against():
    sizes = {
        (path, method): parameter["schema"]
        for path, method, operation in operations(served_schema())
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "page_size"
    }
    assert len(sizes) >= 15
    for (path, _), size in sizes.items():
        pagination = OrderedPagination if path.startswith(ORDERED_PAGES) else CheckedCursorPagination
        assert size == {"type": "integer", "minimum": 1, "maximum": pagination.max_page_size}, path


def test_inputs_that_refuse_unknown_fields_say_so():
    components = served_schema()["components"]["schemas"]
    names = ("NodeCreateRequest", "SearchStartRequest", "SearchBudgetsInputRequest", "GraphTurnRequest")
    for name in (*names, "MemberSetRequest", "TokenCreateRequest"):
        assert components[name]["additionalProperties"] is False, name


def test_lists_document_the_bounds_they_are_checked_against():
    components = served_schema()["components"]["schemas"]
    questions = components["SearchStartRequest"]["properties"]["questions"]
    messages = components["GraphMemorizeRequest"]["properties"]["messages"]
    assert (questions["minItems"], questions["maxItems"]) == (1, 20)
    assert (messages["minItems"], messages["maxItems"]) == (1, 200)
