"""The MCP server over real HTTP, with the SDK's own client: the registry's tools and memory's
nodes as resources, as the principal of an API token, refused in the API's words."""

import json

import httpx
import pytest
from django.test import Client
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS
from pydantic import AnyUrl

from memory import selectors
from memsite.api import json_body_limit
from memsite.spaces.logic import Role
from memsite.spaces.models import ApiToken, Space
from memsite.throttles import UserRequestThrottle
from tests.factories import DocumentFactory, UserFactory, default_space, token_for
from tests.tools.mcp.conftest import with_session
from tools.mcp.app import NO_TOKEN
from tools.mcp.server import FAILED, RESOURCE_NOT_FOUND
from tools.registry import all_tools

READ_ONLY = "Readers can only read; this needs an editor."


def folder(name: str):
    return selectors.node_internal_folder(space=default_space(), name=name)


@pytest.fixture
def notes():
    return DocumentFactory(parent=folder("references"), name="notes.md", content=b"# Notes\n\nStaging is on 8443.")


def call(url: str, key: str, name: str, arguments: dict):
    return with_session(url, key, lambda session: session.call_tool(name, arguments))


def refusal(result) -> dict:
    """A tool error's body: what the API answers, with its status, as text and as structure."""
    assert result.isError
    body = json.loads(result.content[0].text)
    assert result.structuredContent == body
    return body


def test_every_tool_of_the_registry_is_listed_with_its_own_schema(mcp_url, user):
    listed = with_session(mcp_url, token_for(user), lambda session: session.list_tools()).tools
    assert [tool.name for tool in listed] == [tool.name for tool in all_tools()]
    for mcp_tool, tool in zip(listed, all_tools(), strict=True):
        assert mcp_tool.inputSchema == tool.parameters()
        assert mcp_tool.description == tool.description
        assert mcp_tool.annotations.readOnlyHint is (not tool.writes)


def test_a_read_tool_reads_the_tree(mcp_url, user, notes):
    result = call(mcp_url, token_for(user, role=Role.READER), "memory_read", {"node": "/references/notes.md"})
    assert not result.isError
    assert result.structuredContent["content"] == "# Notes\n\nStaging is on 8443."
    assert result.structuredContent["node"]["id"] == notes.pk
    assert json.loads(result.content[0].text) == result.structuredContent


def test_a_write_tool_writes_as_the_tokens_user(mcp_url, user):
    arguments = {"parent": "/references", "name": "ports.md", "content": "# Ports\n\n8443", "description": "Ports"}
    result = call(mcp_url, token_for(user), "memory_write", arguments)
    assert not result.isError and result.structuredContent["created"] is True
    written = selectors.node_resolve(space=default_space(), path="/references/ports.md")
    assert selectors.node_content(node=written) == b"# Ports\n\n8443"
    assert (written.description, written.created_by_id) == ("Ports", user.pk)


def test_a_reader_is_refused_a_write_tool_and_nothing_is_written(mcp_url, user):
    arguments = {"parent": "/references", "name": "ports.md", "content": "# Ports"}
    result = call(mcp_url, token_for(user, role=Role.READER), "memory_write", arguments)
    assert refusal(result) == {"status": 403, "detail": READ_ONLY}
    assert not selectors.node_children_at(space=default_space(), path="/references").filter(name="ports.md").exists()


def test_invalid_arguments_are_refused_as_the_api_refuses_them(mcp_url, user):
    body = refusal(call(mcp_url, token_for(user), "memory_read", {"node": "/references/notes.md", "offset": "1"}))
    assert body["status"] == 400 and list(body["arguments"]) == ["offset"]
    assert refusal(call(mcp_url, token_for(user), "no_such_tool", {}))["status"] == 400


def test_a_node_of_another_space_is_as_missing_as_none(mcp_url, user):
    lab = Space.objects.create(slug="lab", name="Lab")
    theirs = DocumentFactory(parent=selectors.node_internal_folder(space=lab, name="references"), name="secret.md")
    key = token_for(user)
    missing = refusal(call(mcp_url, key, "memory_read", {"node": "memory_" + "0" * 32}))
    found = refusal(call(mcp_url, key, "memory_read", {"node": theirs.pk}))
    assert found == {"status": 404, "detail": f"No memory node with id '{theirs.pk}'."}
    assert missing["detail"].replace("0" * 32, "") == found["detail"].replace(theirs.pk.removeprefix("memory_"), "")


def test_a_failure_is_a_tool_error_without_its_traceback(mcp_url, user, monkeypatch, caplog):
    def fail(*args):
        raise RuntimeError("the secret inside")

    monkeypatch.setattr("tools.mcp.server.tool_call", fail)
    body = refusal(call(mcp_url, token_for(user), "memory_read", {"node": "/references"}))
    assert body == {"status": 500, "detail": FAILED}
    assert "the secret inside" in caplog.text  # logged, not sent


def test_resources_list_the_roots_and_read_a_node_by_its_path(mcp_url, user, notes):
    DocumentFactory(parent=folder("references"), name="a b é.md", content=b"spaced")

    async def work(session):
        roots = await session.list_resources()
        templates = await session.list_resource_templates()
        document = await session.read_resource(AnyUrl("memsite://node/references/notes.md"))
        listing = await session.read_resource(AnyUrl("memsite://node/references"))
        return roots, templates, document, listing

    roots, templates, document, listing = with_session(mcp_url, token_for(user, role=Role.READER), work)
    assert {str(root.uri) for root in roots.resources} == {
        f"memsite://node/{name}" for name in ("projects", "references", "swarmstar", "user")
    }
    assert [template.uriTemplate for template in templates.resourceTemplates] == ["memsite://node/{path}"]
    assert document.contents[0].text == "# Notes\n\nStaging is on 8443."
    assert document.contents[0].mimeType == "text/markdown"
    children = json.loads(listing.contents[0].text)["children"]
    assert [(child["name"], child["uri"]) for child in children] == [
        ("notes.md", "memsite://node/references/notes.md"),
        ("a b é.md", "memsite://node/references/a%20b%20%C3%A9.md"),
    ]
    spaced = with_session(mcp_url, token_for(user), lambda session: session.read_resource(AnyUrl(children[1]["uri"])))
    assert spaced.contents[0].text == "spaced"


def test_a_resource_of_another_space_is_not_found(mcp_url, user):
    lab = Space.objects.create(slug="lab", name="Lab")
    DocumentFactory(parent=selectors.node_internal_folder(space=lab, name="references"), name="secret.md")
    uri = AnyUrl("memsite://node/references/secret.md")
    with pytest.raises(McpError) as raised:
        with_session(mcp_url, token_for(user), lambda session: session.read_resource(uri))
    assert raised.value.error.code == RESOURCE_NOT_FOUND
    assert raised.value.error.message == "No memory node at '/references/secret.md'."


def test_a_resource_uri_naming_a_nul_is_invalid(mcp_url, user):
    with pytest.raises(McpError) as raised:
        with_session(mcp_url, token_for(user), lambda session: session.read_resource(AnyUrl("memsite://node/%00")))
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.message == "The URI's path holds a NUL character."


# -- the gate, over plain HTTP --------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def post(url: str, headers: dict[str, str] | None = None, **options) -> httpx.Response:
    options.setdefault("json", INITIALIZE)
    return httpx.post(url, headers={**ACCEPT, **(headers or {})}, timeout=30, **options)


def test_a_request_without_a_valid_token_is_a_401_saying_why(mcp_url, user):
    assert post(mcp_url, {"Authorization": f"Token {token_for(user)}"}).status_code == 200
    refused = post(mcp_url, {"Authorization": "Token ms_not-a-key"})
    assert (refused.status_code, refused.json()) == (401, {"detail": "Invalid token."})
    assert refused.headers["WWW-Authenticate"] == "Token"
    assert post(mcp_url, {"Authorization": "Bearer two keys"}).json() == {
        "detail": "Invalid token header: one key after the keyword, without spaces."
    }
    assert post(mcp_url).json() == {"detail": NO_TOKEN}


def test_a_session_is_not_accepted(mcp_url):
    browser = Client()
    browser.force_login(UserFactory())
    cookie = f"sessionid={browser.cookies['sessionid'].value}"
    refused = post(mcp_url, {"Cookie": cookie})
    assert (refused.status_code, refused.json()) == (401, {"detail": NO_TOKEN})


def test_the_api_rate_counts_mcp_requests(mcp_url, user, settings, monkeypatch):
    settings.MEMSITE_API_RATE = "2/min"
    # Mid-minute, and still: the three requests fall in one window wherever the wall clock is.
    monkeypatch.setattr(UserRequestThrottle, "timer", staticmethod(lambda: 1_000_050.0))
    key = token_for(user)
    answers = [post(mcp_url, {"Authorization": f"Token {key}"}) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].json()["detail"].startswith("Request was throttled.")
    assert int(answers[2].headers["Retry-After"]) >= 1


def test_a_body_over_what_a_tool_call_takes_is_a_413(mcp_url, user, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 1000
    limit = json_body_limit()  # as POST /api/tools/call/ takes a call: memory_write's content at the cap
    headers = {"Authorization": f"Token {token_for(user)}", "Content-Type": "application/json"}
    body = json.dumps({**INITIALIZE, "padding": "x" * limit}).encode()
    announced = post(mcp_url, headers, json=None, content=body)
    assert (announced.status_code, announced.json()["detail"]) == (
        413,
        f"The request body is {len(body)} bytes; the limit is {limit} bytes.",
    )
    chunked = post(mcp_url, headers, json=None, content=iter([body[:500], body[500:]]))  # no Content-Length
    assert chunked.status_code == 413


def test_only_post_is_served_and_only_for_allowed_hosts(mcp_url, user):
    key = token_for(user)
    assert httpx.get(mcp_url, headers={**ACCEPT, "Authorization": f"Token {key}"}).status_code == 405
    foreign = post(mcp_url, {"Authorization": f"Token {key}", "Host": "evil.example"})
    assert foreign.status_code == 400 and foreign.json()["detail"].startswith("Invalid Host header")


def test_a_tokens_use_is_noted_once_it_is_answered(mcp_url, user):
    key = token_for(user)
    assert ApiToken.objects.get().last_used_at is None
    post(mcp_url, {"Authorization": f"Token {key}"})
    assert ApiToken.objects.get().last_used_at is not None
