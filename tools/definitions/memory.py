"""The memory tree's tools: passages for a query, a node's text, a document written, a folder's
children, and the tree organised: a folder made, a node renamed or described, moved, deleted.
Each calls what memory's REST API calls, and answers in its shapes."""

import datetime
from typing import Annotated, Any

from django.db import transaction
from pydantic import AliasChoices, BeforeValidator, ConfigDict, Field, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

from memory import selectors, services
from memory.api.serializers import DATE_HELP, HitSerializer, NodeDetailSerializer, NodeSerializer
from memory.index.expand import EXPAND_TOKENS_HELP, MAX_EXPAND_TOKENS
from memory.index.retrieve import MAX_K, MAX_QUERY_CHARS, PER_NODE_HELP, retrieve
from memory.index.times import AFTER_HELP, BEFORE_HELP
from memory.logic.dates import iso_date
from memory.models import Node
from memory.types import ContentKind, get_type
from memory.validation import MAX_DESCRIPTION_LENGTH, MAX_NAME_BYTES
from memsite.errors import InvalidInput, NotFound
from memsite.spaces.principals import Principal
from tools.definitions.refs import NODE_HELP, ROOT, NodeRef, node_of
from tools.logic.schemas import ToolArgs
from tools.registry import Tool

MAX_TYPES = 16
READ_CHARS = 20_000  # what memory_read returns unless asked for less or more
MAX_READ_CHARS = 100_000
LIST_PAGE = 50
MAX_LIST_PAGE = 200


def _day(value: Any) -> Any:
    """A string as the day it names (`iso_date`, as the API reads one); anything else as it is,
    for the type to take (null) or refuse."""
    if not isinstance(value, str):
        return value
    try:
        return iso_date(value)
    except ValueError as exc:
        raise PydanticCustomError("date", str(exc)) from None


Day = Annotated[datetime.date, BeforeValidator(_day)]


# -- memory_retrieve -----------------------------------------------------------------------------


class RetrieveArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"query": "which status code means a conflict", "k": 5}]})

    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)] = Field(
        description="What to look for, in words."
    )
    start: NodeRef | None = Field(None, description="Only this node and its subtree (a path or an id); null for all.")
    k: int = Field(10, ge=1, le=MAX_K, description=f"How many passages, 1 to {MAX_K}.")
    types: list[str] = Field(
        default_factory=list, max_length=MAX_TYPES, description="Only nodes of these types, such as document."
    )
    per_node: int | None = Field(None, ge=1, le=MAX_K, description=PER_NODE_HELP)
    expand_tokens: int | None = Field(None, ge=1, le=MAX_EXPAND_TOKENS, description=EXPAND_TOKENS_HELP)
    after: Day | None = Field(None, description=AFTER_HELP)
    before: Day | None = Field(None, description=BEFORE_HELP)

    @field_validator("types")
    @classmethod
    def known_types(cls, types: list[str]) -> list[str]:
        for name in types:
            try:
                get_type(name)
            except InvalidInput as exc:
                raise PydanticCustomError("unknown_type", exc.message) from None
        return list(dict.fromkeys(types))


def retrieve_run(principal: Principal, args: RetrieveArgs) -> dict[str, Any]:
    start = node_of(principal, args.start) if args.start is not None else None
    hits = retrieve(
        query=args.query,
        by=principal,
        start=start,
        k=args.k,
        types=args.types,
        per_node=args.per_node,
        expand_tokens=args.expand_tokens,
        after=args.after,
        before=args.before,
    )
    return {"query": args.query, "results": HitSerializer(hits, many=True).data}


# -- memory_read ---------------------------------------------------------------------------------


class ReadArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"node": "/user/user_preferences.md"}, {"node": "/user/notes.md", "offset": 20000}]
        }
    )

    node: NodeRef = Field(description=NODE_HELP)
    offset: int = Field(0, ge=0, description="The first character to return (a passage's start, from memory_retrieve).")
    limit: int = Field(READ_CHARS, ge=1, le=MAX_READ_CHARS, description=f"Characters to return, 1 to {MAX_READ_CHARS}.")


def _text_range(node: Node, offset: int, limit: int) -> dict[str, Any]:
    """The characters [offset, offset + limit) of the node's text, and how many it holds; a
    folder holds none, and content that is not UTF-8 text is said to be binary."""
    if get_type(node.type).content is ContentKind.NONE:
        return {"content": None, "offset": None, "end": None, "total_chars": None, "binary": False}
    try:
        text = selectors.node_content_read(node=node).data.decode("utf-8")
    except UnicodeDecodeError:
        return {"content": None, "offset": None, "end": None, "total_chars": None, "binary": True}
    piece = text[offset : offset + limit]
    return {"content": piece, "offset": offset, "end": offset + len(piece), "total_chars": len(text), "binary": False}


def read_run(principal: Principal, args: ReadArgs) -> dict[str, Any]:
    node = node_of(principal, args.node)
    return {"node": NodeSerializer(node).data, **_text_range(node, args.offset, args.limit)}


# -- memory_write --------------------------------------------------------------------------------


class WriteArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "parent": "/swarmstar/nodes/a",
                    "name": "findings.md",
                    "content": "# Findings\n\nStaging listens on port 8443.",
                    "description": "What node a found about staging",
                },
                {"parent": "/swarmstar/nodes/a", "name": "findings.md", "description": "Staging's ports", "version": 2},
            ]
        }
    )

    parent: NodeRef = Field(
        # `folder` was its name before 0.1; accepted until the next release (README, MCP).
        validation_alias=AliasChoices("parent", "folder"),
        description="The folder the document is in: a path, such as /swarmstar/nodes/a (folders missing on the "
        "way are made), or an id.",
    )
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_BYTES)] = Field(
        description="The document's name in the folder, such as findings.md."
    )
    content: str | None = Field(None, description="Its markdown: the whole text. Null keeps the text it has.")
    description: Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION_LENGTH)] | None = Field(
        None, description="What it holds, in a sentence. Null keeps the one it has."
    )
    version: int | None = Field(
        None,
        ge=1,
        description="The version you read: if the document is at another, or gone, nothing is written (409).",
    )
    date: Day | None = Field(None, description=f"{DATE_HELP} Null keeps the one it has.")


def _folder_made(principal: Principal, ref: str) -> Node:
    """The folder `ref` names; for a path, made where missing with the folders above it, as the
    client's write makes them: a node makes its folders, below its token's own, on first write."""
    try:
        return node_of(principal, ref)
    except NotFound:
        if not ref.startswith(ROOT):
            raise
    return services.folder_make(path=ref, by=principal)


@transaction.atomic  # the folders made and the document: all or nothing
def write_run(principal: Principal, args: WriteArgs) -> dict[str, Any]:
    document, created = services.document_write(
        folder=_folder_made(principal, args.parent),
        name=args.name,
        content=args.content,
        description=args.description,
        version=args.version,
        date=args.date,
        by=principal,
    )
    return {"created": created, "node": NodeDetailSerializer(document).data}


# -- memory_list ---------------------------------------------------------------------------------


class ListArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"node": "/"}, {"node": "/projects", "limit": 20}]})

    node: NodeRef = Field(ROOT, description="A folder's path or id; / for the top of the tree.")
    cursor: Annotated[str, StringConstraints(max_length=Node._meta.get_field("path").max_length)] | None = Field(
        None, description="The next_cursor of the page before; null for the first page."
    )
    limit: int = Field(LIST_PAGE, ge=1, le=MAX_LIST_PAGE, description=f"Children per page, 1 to {MAX_LIST_PAGE}.")


def _cursor_checked(cursor: str, parent_path: str) -> str:
    """A cursor is a child's place in the tree: one step below the listed node's."""
    step = cursor[len(parent_path) :]
    if not cursor.startswith(parent_path) or len(step) != Node.steplen or set(step) - set(Node.alphabet):
        raise InvalidInput(
            "The cursor is not one of this node's pages.",
            data={"cursor": ["Pass a next_cursor of this node's pages, as it was given."]},
        )
    return cursor


def _children(principal: Principal, args: ListArgs) -> tuple[Node | None, list[Node], list[Node]]:
    """The listed node (None for the top), its ancestors and itself, and the page's children
    with one more, which says whether a page follows."""
    if args.node == ROOT:
        first = _cursor_checked(args.cursor, "") if args.cursor is not None else ""
        roots = selectors.node_roots(space=principal.space).filter(path__gt=first).select_related("created_by")
        return None, [], list(roots[: args.limit + 1])
    node = node_of(principal, args.node)
    after = _cursor_checked(args.cursor, node.path) if args.cursor is not None else None
    page = selectors.node_children(node=node, after_path=after).select_related("created_by")[: args.limit + 1]
    return node, [*selectors.node_ancestors(node=node), node], list(page)


def list_run(principal: Principal, args: ListArgs) -> dict[str, Any]:
    node, chain, children = _children(principal, args)
    page, more = children[: args.limit], len(children) > args.limit
    return {
        "node": NodeSerializer(node, context={"ancestors": chain[:-1]}).data if node is not None else None,
        "children": NodeSerializer(page, many=True, context={"ancestors": chain}).data,
        "next_cursor": page[-1].path if more else None,
    }


# -- memory_folder, memory_update, memory_move, memory_delete ------------------------------------


class FolderArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"path": "/swarmstar/nodes/a"}]})

    path: NodeRef = Field(description="The folder's path, such as /swarmstar/nodes/a; below one of the top folders.")


def folder_run(principal: Principal, args: FolderArgs) -> dict[str, Any]:
    return {"node": NodeDetailSerializer(services.folder_make(path=args.path, by=principal)).data}


class UpdateArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"node": "/swarmstar/nodes/a/findings.md", "name": "staging.md"},
                {"node": "/swarmstar/nodes/a", "description": "What node a found", "version": 3},
            ]
        }
    )

    node: NodeRef = Field(description=NODE_HELP)
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_BYTES)] | None = Field(
        None, description="Its new name in its folder. Null keeps the name."
    )
    description: Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION_LENGTH)] | None = Field(
        None, description="What it holds, in a sentence. Null keeps the one it has."
    )
    date: Day | None = Field(None, description=f"{DATE_HELP} Null keeps the one it has.")
    version: int | None = Field(
        None, ge=1, description="The version you read: if the node is at another, nothing is written (409)."
    )


def update_run(principal: Principal, args: UpdateArgs) -> dict[str, Any]:
    if args.name is None and args.description is None and args.date is None:
        raise InvalidInput("Nothing to change: give a name, a description, a date or some of them.")
    node = services.node_update(
        node=node_of(principal, args.node),
        expected_version=args.version,
        name=args.name,
        description=args.description,
        date=services.Keep.KEEP if args.date is None else args.date,
        by=principal,
    )
    return {"node": NodeDetailSerializer(node).data}


class MoveArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"node": "/swarmstar/nodes/a/findings.md", "parent": "/references"}]}
    )

    node: NodeRef = Field(description=NODE_HELP)
    parent: NodeRef = Field(description="The folder to move it into, at the end of its children: a path or an id.")


def move_run(principal: Principal, args: MoveArgs) -> dict[str, Any]:
    node = services.node_move(node=node_of(principal, args.node), parent=node_of(principal, args.parent), by=principal)
    return {"node": NodeDetailSerializer(node).data}


class DeleteArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"node": "/swarmstar/nodes/a/old.md"}]})

    node: NodeRef = Field(description=NODE_HELP)


def delete_run(principal: Principal, args: DeleteArgs) -> dict[str, Any]:
    node = node_of(principal, args.node)
    path = selectors.node_path(node=node)
    services.node_delete(node=node, by=principal)
    return {"deleted": path}


TOOLS = [
    Tool(
        name="memory_retrieve",
        description="The best passages of memory for a query, at once and with no LLM: each with its node's path "
        "and id, the character range and a snippet, and with expand_tokens the passages around it. Read more around "
        "one with memory_read.",
        args=RetrieveArgs,
        run=retrieve_run,
        writes=False,
    ),
    Tool(
        name="memory_read",
        description="A node of memory by its path or id, and a range of its text (20,000 characters from `offset` "
        "unless `limit` says otherwise), with the text's total length.",
        args=ReadArgs,
        run=read_run,
        writes=False,
    ),
    Tool(
        name="memory_write",
        description="Write a markdown document into a folder (made, with the folders above it, if missing): created "
        "when the folder has none of that name, else its content, description and date replaced (those given). "
        "Send `version` to write only if nobody changed it since.",
        args=WriteArgs,
        run=write_run,
        writes=True,
    ),
    Tool(
        name="memory_list",
        description="The children of a folder (or of the top of the tree, /), in order, a page at a time: pass "
        "next_cursor back for the next page.",
        args=ListArgs,
        run=list_run,
        writes=False,
    ),
    Tool(
        name="memory_folder",
        description="The folder at a path, made with the folders above it where missing (as mkdir -p); the "
        "folder as it is when it is there already.",
        args=FolderArgs,
        run=folder_run,
        writes=True,
    ),
    Tool(
        name="memory_update",
        description="Rename a node in its folder, or change its description or its date, or some of them. Send "
        "`version` to change it only if nobody changed it since.",
        args=UpdateArgs,
        run=update_run,
        writes=True,
    ),
    Tool(
        name="memory_move",
        description="Move a node, with everything under it, into another folder, at the end of its children.",
        args=MoveArgs,
        run=move_run,
        writes=True,
    ),
    Tool(
        name="memory_delete",
        description="Delete a node with everything under it. It cannot be undone.",
        args=DeleteArgs,
        run=delete_run,
        writes=True,
    ),
]
