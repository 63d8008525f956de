"""The MCP server (the SDK's low-level Server): every tool of the registry with its own JSON
Schema, and memory's nodes as resources read by path, each run in a worker thread as the
request's principal. Explained in docs/mcp.md."""

import json
import logging
from collections.abc import Callable
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl
from starlette.types import Scope

from memory import selectors
from memory.models import Node
from memory.types import ContentKind, get_type
from memsite.errors import InvalidInput, ServiceError, ServiceUnavailable
from memsite.middleware import DATABASE_ERRORS, DATABASE_UNAVAILABLE
from memsite.spaces.models import Space
from memsite.storable import unstorable
from tools.logic.resources import NODE_URI_TEMPLATE, node_uri, uri_path
from tools.mcp.context import in_thread, principal_of
from tools.registry import Tool, all_tools, tool_call

logger = logging.getLogger(__name__)

NAME = "memsite"
INSTRUCTIONS = (
    "memsite is a swarm's shared memory: one tree of folders and markdown documents, each at a "
    "readable path such as /user/user_preferences.md. Find passages with memory_retrieve, read a "
    "node with memory_read, write documents with memory_write. A refused call says why, with the "
    "HTTP status the REST API would answer."
)
MAX_ROOTS = 100  # resources listed: the space's top-level folders
MAX_LISTED = 200  # children of a folder read as a resource
RESOURCE_NOT_FOUND = -32002  # the code MCP's specification gives a resource that does not exist
FAILED = "The server failed to do this; the error is logged."


def build_server() -> Server:
    server: Server = Server(NAME, version=_version(), instructions=INSTRUCTIONS)
    tools = [mcp_tool(tool) for tool in all_tools()]

    def scope() -> Scope:
        return server.request_context.request.scope  # type: ignore[union-attr]

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools

    # The registry validates the arguments, and refuses them in the API's words.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await tool_result(scope(), name, arguments)

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        return await _answer(scope(), partial(roots, principal_of(scope()).space))

    @server.list_resource_templates()
    async def list_resource_templates() -> list[types.ResourceTemplate]:
        return [NODE_TEMPLATE]

    @server.read_resource()
    async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        return await _answer(scope(), partial(resource_read, principal_of(scope()).space, str(uri)))

    return server


def _version() -> str | None:
    try:
        return version("memsite")
    except PackageNotFoundError:
        return None


def mcp_tool(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        inputSchema=tool.parameters(),
        annotations=types.ToolAnnotations(readOnlyHint=not tool.writes),
    )


# -- tools --------------------------------------------------------------------------------------


async def tool_result(scope: Scope, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The tool's answer as JSON text and structured content; a refusal as a tool error whose
    text is the API's body with its status."""
    try:
        result = await in_thread(scope, partial(tool_call, principal_of(scope), name, arguments))
    except Exception as error:
        return refusal_result(refusal_of(error, f"Tool {name[:64]!r}"))
    return types.CallToolResult(content=[_text(result)], structuredContent=result, isError=False)


class ServerFailed(ServiceError):
    status = 500


def refusal_of(error: Exception, what: str) -> ServiceError:
    """The ServiceError an exception is answered as: its own, the database's 503, or a 500
    whose traceback is logged and never sent."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, DATABASE_ERRORS):
        logger.error("%s: the database is unavailable: %s: %s", what, type(error).__name__, error)
        return ServiceUnavailable(DATABASE_UNAVAILABLE)
    logger.exception("%s failed", what)
    return ServerFailed(FAILED)


def refusal_body(refusal: ServiceError) -> dict[str, Any]:
    """What the API answers for `refusal`, with its status (and Retry-After's seconds)."""
    body = {"status": refusal.status, **refusal.body()}
    if refusal.retry_after_s:
        body["retry_after_s"] = refusal.retry_after_s
    return body


def refusal_result(refusal: ServiceError) -> types.CallToolResult:
    body = refusal_body(refusal)
    return types.CallToolResult(content=[_text(body)], structuredContent=body, isError=True)


def _text(value: dict[str, Any]) -> types.TextContent:
    return types.TextContent(type="text", text=json.dumps(value, ensure_ascii=False, separators=(",", ":")))


# -- resources ----------------------------------------------------------------------------------

NODE_TEMPLATE = types.ResourceTemplate(
    uriTemplate=NODE_URI_TEMPLATE,
    name="node",
    title="A memory node, by its path",
    description=(
        "A node at its readable path without the leading slash, such as "
        "memsite://node/user/user_preferences.md: a document's markdown, a project file's text or "
        f"bytes, a folder's first {MAX_LISTED} children as JSON."
    ),
)


async def _answer(scope: Scope, read: Callable[[], Any]) -> Any:
    """`read()` in a worker thread; a refusal as a JSON-RPC error carrying the API's message
    and status (a missing node: MCP's resource-not-found)."""
    try:
        return await in_thread(scope, read)
    except Exception as error:
        refusal = refusal_of(error, "A resource read")
    code = RESOURCE_NOT_FOUND if refusal.status == 404 else types.INVALID_PARAMS
    raise McpError(types.ErrorData(code=code, message=refusal.message, data=refusal_body(refusal)))


def roots(space: Space) -> list[types.Resource]:
    return [_resource(node, f"/{node.name}") for node in selectors.node_roots(space=space)[:MAX_ROOTS]]


def _resource(node: Node, path: str) -> types.Resource:
    return types.Resource(
        uri=AnyUrl(node_uri(path)),
        name=node.name,
        description=node.description or None,
        mimeType=_mime_type(node),
    )


def _mime_type(node: Node) -> str:
    kind = get_type(node.type).content
    return {ContentKind.NONE: "application/json", ContentKind.TEXT: "text/markdown"}.get(kind, "text/plain")


def resource_read(space: Space, uri: str) -> list[ReadResourceContents]:
    """The node's content (text when it is UTF-8, else bytes), or a folder's children."""
    path = uri_path(uri)
    if path is None:
        raise InvalidInput(f"Not a node's URI: {uri[:200]!r}; they read {NODE_URI_TEMPLATE}.")
    problem = unstorable(path, "The URI's path")  # no name holds it, and PostgreSQL refuses to look
    if problem is not None:
        raise InvalidInput(f"{problem}.")
    node = selectors.node_resolve(space=space, path=path)
    if get_type(node.type).content is ContentKind.NONE:
        listing = json.dumps(_listing(node, path), ensure_ascii=False)
        return [ReadResourceContents(listing, "application/json")]
    data = selectors.node_content_read(node=node).data
    try:
        return [ReadResourceContents(data.decode("utf-8"), _mime_type(node))]
    except UnicodeDecodeError:
        return [ReadResourceContents(data, "application/octet-stream")]


def _listing(node: Node, path: str) -> dict[str, Any]:
    children = list(selectors.node_children(node=node)[:MAX_LISTED])
    return {
        "id": node.pk,
        "path": path,
        "type": node.type,
        "description": node.description,
        "children": [
            {
                "name": child.name,
                "type": child.type,
                "description": child.description,
                "uri": node_uri(f"{path}/{child.name}"),
            }
            for child in children
        ],
        "more_children": max(0, node.numchild - len(children)),
    }
