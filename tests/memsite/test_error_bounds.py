"""A refused request costs no more than its body: a body of about 0.9 MB of bad items is
answered with a 400 of a few KiB that names the first errors and counts the rest, the request
never holds more than 64 MiB while it is checked, and nothing is written."""

import json
import tracemalloc
from collections.abc import Callable

import pytest
from django.test import Client

from agents.context import services as context_services
from agents.graphs import services as graph_services
from memsite.api import MAX_JSON_DEPTH, MAX_JSON_VALUES, NESTED_TOO_DEEPLY, json_values_over, refuse_deep_nesting
from memsite.errors import MAX_ERRORS, MORE_ERRORS, InvalidInput
from tests.factories import default_space
from tests.hardening.bad_input_world import database_dump

BODY_BYTES = 900_000
# Items long enough that a body of them holds fewer values than the parser's limit (100,000).
NUMBER = 1_234_567_890_123_456
TEXT = "x" * 16
MAX_RESPONSE_BYTES = 16 * 1024
MAX_PEAK_BYTES = 64 * 1024 * 1024

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def offline(offline_llm):
    return offline_llm


@pytest.fixture
def agent():
    agent = context_services.agent_create(space=default_space(), name="scout", model="gpt-4")
    context_services.message_append(agent=agent, role="user", content="Hello.")
    return agent


@pytest.fixture
def graph():
    return graph_services.graph_create(
        space=default_space(), task="Find the port", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )


def repeated(item: object, wrap: Callable[[list], object]) -> bytes:
    """`wrap([item, item, ...])` as JSON, with as many items as make about BODY_BYTES."""
    one = len(json.dumps(item)) + 2
    body = json.dumps(wrap([item] * (BODY_BYTES // one))).encode()
    assert BODY_BYTES * 0.8 < len(body) < BODY_BYTES * 1.2
    return body


def refused(client: Client, method: str, path: str, body: bytes) -> dict:
    """The response to a request that must be refused with 400, checked for its size, the memory
    held while it was answered, and the database left as it was."""
    before = database_dump()
    tracemalloc.start()
    try:
        response = getattr(client, method)(path, body, content_type="application/json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 400, response.content[:500]
    assert len(response.content) < MAX_RESPONSE_BYTES, response.content[:500]
    assert peak < MAX_PEAK_BYTES, f"{peak / 2**20:.0f} MiB held to refuse {len(body):,} bytes"
    assert database_dump() == before
    return response.json()


def test_json_of_too_many_values_is_refused_before_it_is_parsed(api):
    # Parsed, each empty list would cost about 60 bytes: 130 MiB for this body of 6 MB.
    body = json.dumps({"questions": [[]] * 2_000_000}).encode()
    before = database_dump()
    tracemalloc.start()
    try:
        response = api.post("/api/searches/", body, content_type="application/json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert response.status_code == 413
    assert response.json() == {"detail": "The JSON document holds more than 100,000 values."}
    assert peak < MAX_PEAK_BYTES, f"{peak / 2**20:.0f} MiB held to refuse {len(body):,} bytes"
    assert database_dump() == before


def test_commas_and_brackets_inside_strings_are_not_values(api, internal):
    document = {
        "parent": internal["user"].id,
        "type": "document",
        "name": "table.csv",
        "content": '[{,\\"' * 50_000,
    }
    response = api.post("/api/nodes/", document, format="json")

    assert response.status_code == 201, response.content[:500]


@pytest.mark.parametrize(
    ("body", "over"),
    [
        (b'\\"' * 30_000 + b"[" * 100_000, False),  # one string never closed: one value
        (b'["a\\' + b"," * 100_001, False),  # a string closed by nothing, its escape at the end
        (b"[" + b'"x",' * 100_000 + b'"x"]', True),
        (b'["\\"",' + b"0," * 100_000 + b"0]", True),  # an escaped quote closes no string
    ],
    ids=["unclosed string of escaped quotes", "unclosed string ending in a backslash", "strings", "escaped quote"],
)
def test_values_are_counted_in_one_pass_whatever_the_quotes(body, over):
    """A string that never closes runs to the end: the scan never starts again at a later quote
    (a body of 30,000 `\\"` took minutes when it did)."""
    assert json_values_over(body, MAX_JSON_VALUES) is over


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        (b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH, False),
        (b'["' + b"[" * 5_000 + b'"]', False),  # brackets in a string open nothing
        (b"[" + b"{}," * 5_000 + b"x]", False),  # no JSON: the parser that reads it next says so
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), True),
        (b'{"a":' * 5_000 + b"0" + b"}" * 5_000, True),  # past what the parser follows
    ],
    ids=["at the bound", "in a string", "no JSON", "past the bound", "past the parser"],
)
def test_json_nested_past_the_bound_is_refused(body, refused):
    if refused:
        with pytest.raises(InvalidInput, match=NESTED_TOO_DEEPLY):
            refuse_deep_nesting(body)
    else:
        refuse_deep_nesting(body)


def test_a_search_of_too_many_bad_questions_is_refused_by_its_length(api):
    body = refused(api, "post", "/api/searches/", repeated(NUMBER, lambda items: {"questions": items}))

    assert body == {"questions": ["Ensure this field has no more than 20 elements."]}


def test_too_many_bad_tool_calls_are_refused_by_their_number(api, agent):
    body = refused(
        api,
        "post",
        f"/api/agents/{agent.pk}/messages/",
        repeated(NUMBER, lambda items: {"role": "assistant", "tool_calls": items}),
    )

    assert body == {"tool_calls": ["tool_calls must be a list of at most 64 calls."]}


def test_too_many_bad_references_are_refused_by_their_number(api, agent):
    body = refused(
        api,
        "post",
        f"/api/agents/{agent.pk}/messages/",
        repeated(TEXT, lambda items: {"role": "user", "references": items}),
    )

    assert body == {"references": ["references must be a list of at most 32 message positions."]}


def test_a_list_within_its_length_names_the_first_errors_and_says_the_rest_were_not_checked(api, agent):
    body = refused(
        api,
        "post",
        f"/api/agents/{agent.pk}/messages/",
        json.dumps({"role": "assistant", "tool_calls": [1] * 64}).encode(),
    )

    errors = body["tool_calls"]
    assert [key for key in errors if key != MORE_ERRORS] == [str(index) for index in range(MAX_ERRORS)]
    assert errors["0"] == ['Expected a dictionary of items but got type "int".']
    assert errors[MORE_ERRORS] == ["The other 44 items were not checked."]


def test_unknown_fields_are_named_up_to_the_bound_and_counted(api):
    document = {f"field{number:06}": 1 for number in range(50_000)}
    body = refused(api, "post", "/api/searches/", json.dumps(document).encode())

    named = [key for key in body if key != MORE_ERRORS]
    assert named == [f"field{number:06}" for number in range(MAX_ERRORS)]
    assert body[named[0]][0].startswith("Unknown field. Accepted fields: questions,")
    assert body[MORE_ERRORS] == ["49,980 more unknown fields are not named."]


def test_an_echoed_value_is_cut(api, agent):
    body = refused(
        api,
        "post",
        f"/api/agents/{agent.pk}/messages/",
        json.dumps({"role": "x" * BODY_BYTES}).encode(),
    )

    (message,) = body["role"]
    assert message.startswith('"xxx') and message.endswith("…")
    assert len(message) <= 501


def test_a_snapshot_of_bad_notes_is_refused_at_the_first(api, graph):
    notes = repeated(
        {"role": 1},
        lambda items: {"nodes": {"1": {"node_id": 1, "kind": "task", "thought": items}}},
    )
    body = refused(api, "put", f"/api/graphs/{graph.pk}/snapshot/", notes)

    assert body == {"detail": "Invalid snapshot at nodes.1.thought.0.role: Input should be a valid string."}


def test_a_snapshot_of_bad_edges_is_refused_at_the_first(api, graph):
    edges = repeated({"src": "a", "dst": "b"}, lambda items: {"nodes": {}, "edges": items})
    body = refused(api, "put", f"/api/graphs/{graph.pk}/snapshot/", edges)

    assert body["detail"].startswith("Invalid snapshot at edges.0.src: Input should be a valid integer")


def test_a_snapshot_of_bad_turn_ids_is_refused_at_the_first(api, graph):
    turns = repeated(
        "x",
        lambda items: {"nodes": {"1": {"node_id": 1, "kind": "task", "thought": "t", "related_turn_ids": items}}},
    )
    body = refused(api, "put", f"/api/graphs/{graph.pk}/snapshot/", turns)

    assert body["detail"].startswith("Invalid snapshot at nodes.1.related_turn_ids.0: Input should be a valid integer")


def test_a_memory_json_of_bad_plan_steps_is_refused_at_the_first(api, agent):
    document = repeated([1], lambda items: {"state": {"plan": {"steps": items}}})
    body = refused(api, "put", f"/api/agents/{agent.pk}/memory.json", document)

    assert body["errors"] == [{"path": "state.plan.steps[0]", "message": "a plan step should be a string or an object"}]


def test_a_memory_json_of_many_bad_emotions_is_refused_by_their_number(api, agent):
    document = json.dumps({"state": {"emotions": {f"e{number}": "x" for number in range(60_000)}}}).encode()
    body = refused(api, "put", f"/api/agents/{agent.pk}/memory.json", document)

    assert body["errors"] == [{"path": "state.emotions", "message": "should have at most 100 entries, not 60000"}]


def test_a_memory_json_of_bad_entries_names_the_first_twenty(api, agent):
    body = refused(
        api,
        "put",
        f"/api/agents/{agent.pk}/memory.json",
        repeated(1, lambda items: {"thoughts": items}),
    )

    assert len(body["errors"]) == MAX_ERRORS
    assert body["errors"][0] == {
        "path": "thoughts[0]",
        "message": "should be an object or a string",
    }


def test_a_memory_json_key_is_cut_where_a_refusal_names_it(api, agent):
    document = json.dumps({"neurons": {"k" * BODY_BYTES: 1}}).encode()
    body = refused(api, "put", f"/api/agents/{agent.pk}/memory.json", document)

    (error,) = body["errors"]
    assert error["path"] == "neurons." + "k" * 100 + "…"
