"""The registry: every tool listed once with a valid OpenAI definition and examples that its
schema and its model both accept; lookups; and a call's refusals, each the API's error with
its status, changing nothing."""

import json
import logging

import jsonschema
import pytest

from memory.models import Node, Search, SearchQuestion
from memsite.errors import Forbidden, InvalidInput, NotFound
from memsite.spaces.logic import Role
from tests.factories import AgentFactory, DocumentFactory, GraphFactory, NodeFactory, SearchFactory
from tests.security.test_authorization import fingerprint
from tests.tools.conftest import principal
from tools.logic.schemas import examples
from tools.registry import all_tools, openai_tools, tool_call, tool_get

pytestmark = pytest.mark.django_db

NAMES = [
    "memory_retrieve",
    "memory_read",
    "memory_write",
    "memory_list",
    "memory_folder",
    "memory_update",
    "memory_move",
    "memory_delete",
    "memory_search",
    "memory_search_get",
    "context_assemble",
    "graph_memorize",
    "graph_recall",
    "graph_context",
    "brain_chat",
    "brain_state",
    "questions_pending",
    "question_answer",
]
KNOWN_TYPES = "document, folder, internal_folder, project_file_bytes, project_root_folder"
WRITES = {
    "memory_write",
    "memory_folder",
    "memory_update",
    "memory_move",
    "memory_delete",
    "memory_search",
    "graph_memorize",
    "graph_recall",
    "brain_chat",
    "question_answer",
}


def test_every_tool_is_listed_once_by_room():
    assert [tool.name for tool in all_tools()] == NAMES
    assert {tool.name for tool in all_tools() if tool.writes} == WRITES


def test_the_openai_definitions_are_valid_json_schema_objects():
    definitions = openai_tools()

    assert [definition["function"]["name"] for definition in definitions] == NAMES
    for definition in definitions:
        function = definition["function"]
        assert definition["type"] == "function" and 10 < len(function["description"]) < 300, function["name"]
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object" and parameters["additionalProperties"] is False
        assert "$ref" not in json.dumps(parameters) and "title" not in parameters


@pytest.mark.parametrize("tool", all_tools(), ids=lambda tool: tool.name)
def test_every_example_is_valid_to_the_schema_and_to_the_model(tool):
    shown = examples(tool.args)

    assert shown, f"{tool.name} gives no example arguments"
    for arguments in shown:
        jsonschema.validate(arguments, tool.parameters())
        tool.args.model_validate(arguments)


def test_the_schema_refuses_what_the_model_refuses():
    parameters = tool_get("memory_read").parameters()
    for arguments in ({}, {"node": "/user", "offset": -1}, {"node": "/user", "limit": 100_001}, {"node": "/a", "x": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(arguments, parameters)


def test_a_tool_is_found_by_name():
    assert tool_get("memory_read").name == "memory_read"
    with pytest.raises(NotFound, match="No tool named 'memory_erase'. The tools: memory_retrieve, memory_read"):
        tool_get("memory_erase")


def test_an_unknown_tool_is_a_400_naming_the_tools(editor):
    with pytest.raises(InvalidInput) as refused:
        tool_call(editor, "memory_erase", {})

    assert refused.value.status == 400 and refused.value.data == {"name": ["No such tool."]}
    assert "memory_retrieve" in refused.value.message


@pytest.mark.parametrize(
    ("name", "arguments", "errors"),
    [
        ("memory_read", {}, {"node": ["Field required"]}),
        ("memory_read", {"node": "/user", "offset": "5"}, {"offset": ["Input should be a valid integer"]}),
        ("memory_read", {"node": "/user", "limit": 0}, {"limit": ["Input should be greater than or equal to 1"]}),
        ("memory_retrieve", {"query": "   "}, {"query": ["String should have at least 1 character"]}),
        (
            "memory_retrieve",
            {"query": "x", "types": ["nonsense"]},
            {"types": [f"Unknown memory type 'nonsense'. Known types: {KNOWN_TYPES}."]},
        ),
        (
            "memory_search",
            {"questions": []},
            {"questions": ["List should have at least 1 item after validation, not 0"]},
        ),
        (
            "memory_search",
            {"questions": ["q"], "budgets": {"timeout_s": 0}},
            {"budgets": {"timeout_s": ["Input should be greater than or equal to 1"]}},
        ),
        ("memory_search", {"questions": ["q"], "output": "files"}, {"output": ["Input should be 'answer' or 'node'"]}),
        ("memory_search", {"questions": ["q"], "wait_s": 31}, {"wait_s": ["Input should be less than or equal to 30"]}),
        (
            "graph_memorize",
            {"graph": 1, "messages": [{"role": "tool"}]},
            {"messages": {"0": {"content": ["Field required"]}}},
        ),
        (
            "brain_state",
            {"agent": True},
            {"agent": ["Input should be a valid integer", "Input should be a valid string"]},
        ),
        ("questions_pending", {"limit": 5, "page": 2}, {"page": ["Unknown field. Accepted fields: limit."]}),
    ],
)
def test_invalid_arguments_are_a_400_naming_each_field(editor, name, arguments, errors):
    with pytest.raises(InvalidInput) as refused:
        tool_call(editor, name, arguments)

    assert refused.value.status == 400
    assert refused.value.data == {"arguments": errors}
    assert refused.value.message == f"Invalid arguments for {name}; each is named."


def test_arguments_no_column_could_keep_are_refused(editor):
    with pytest.raises(InvalidInput, match=r"arguments\.content holds a NUL character"):
        tool_call(editor, "memory_write", {"parent": "/user", "name": "a.md", "content": "a\x00b"})
    with pytest.raises(InvalidInput, match="The arguments must be an object"):
        tool_call(editor, "memory_read", ["/user"])  # type: ignore[arg-type]


@pytest.fixture
def rows():
    """One of each row a tool that writes could change."""
    folder = NodeFactory(name="notes")
    return {
        "document": DocumentFactory(parent=folder, name="plan.md"),
        "agent": AgentFactory(name="scout"),
        "graph": GraphFactory(),
        "question": SearchQuestion.objects.create(
            search=SearchFactory(status=Search.Status.WAITING), questions=["Which port?"]
        ),
    }


WRITE_CALLS = {
    "memory_write": lambda rows: {"parent": "/swarmstar/notes", "name": "plan.md", "content": "Changed."},
    "memory_folder": lambda rows: {"path": "/swarmstar/notes/new"},
    "memory_update": lambda rows: {"node": rows["document"].pk, "name": "renamed.md"},
    "memory_move": lambda rows: {"node": rows["document"].pk, "parent": "/references"},
    "memory_delete": lambda rows: {"node": rows["document"].pk},
    "memory_search": lambda rows: {"questions": ["Where is the plan?"], "wait_s": 0},
    "graph_memorize": lambda rows: {
        "graph": rows["graph"].pk,
        "messages": [{"role": "assistant", "content": "I look."}],
    },
    "graph_recall": lambda rows: {"graph": rows["graph"].pk},
    "brain_chat": lambda rows: {"agent": "scout", "text": "Hello."},
    "question_answer": lambda rows: {"question_id": rows["question"].pk, "answer": "Port 8443."},
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_reader_is_refused_every_tool_that_writes_and_nothing_changes(rows, name):
    reader = principal(Role.READER)
    before = fingerprint()

    with pytest.raises(Forbidden, match="Readers can only read; this needs an editor."):
        tool_call(reader, name, WRITE_CALLS[name](rows))

    assert fingerprint() == before


def test_a_reader_calls_the_tools_that_read(reader):
    listed = tool_call(reader, "memory_list", {})
    assert [child["name"] for child in listed["children"]] == ["swarmstar", "user", "projects", "references"]


def test_each_call_is_logged_with_its_outcome(editor, caplog):
    caplog.set_level(logging.INFO, logger="tools.registry")
    tool_call(editor, "memory_list", {})
    with pytest.raises(NotFound):
        tool_call(editor, "memory_read", {"node": "/nowhere"})

    lines = [record.getMessage() for record in caplog.records if record.name == "tools.registry"]
    assert lines == [
        f"Tool memory_list for {editor.user} in default: done.",
        f"Tool memory_read for {editor.user} in default: refused, 404.",
    ]
    assert not Node.objects.filter(name="nowhere").exists()
