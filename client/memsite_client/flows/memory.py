"""The memory tree's flows: nodes by id or readable path, documents written and updated
(If-Match versions), children a page at a time, and passages retrieved without an LLM."""

import base64
import datetime
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from memsite_client.errors import NotFound
from memsite_client.flows.base import Call, Flow, Listing, Policy, exchange, fetch, fields, params
from memsite_client.models import Node, Page, Passage, Retrieval

# A node is named by its id (`memory_<32 hex>`), its readable path (`/user/notes.md`), or itself.
NodeRef = str | Node


def split_path(path: str) -> tuple[str, str]:
    """A document's readable path as its folder's path and its name."""
    folder, _, name = path.rstrip("/").rpartition("/")
    if not path.startswith("/") or not folder or not name:
        raise ValueError(f"{path!r} is not a path inside a folder, such as /references/notes.md.")
    return folder, name


def if_match(version: int | None) -> dict[str, str]:
    return {"If-Match": f'"{version}"'} if version is not None else {}


def iso(day: datetime.date | None) -> str | None:
    """A day as the API takes it (a datetime as itself, of which the server keeps the day)."""
    return day.isoformat() if day is not None else None


def node_url(node_id: str, tail: str = "") -> str:
    return f"nodes/{quote(node_id, safe='')}/{tail}"


class MemoryFlows:
    policy: Policy

    def get(self, node: NodeRef) -> Flow[Node]:
        """The node with this id or readable path."""
        ref = node.id if isinstance(node, Node) else node
        if ref.startswith("/"):
            return (yield from fetch(Call("GET", "nodes/resolve/", params={"path": ref}), Node, self.policy))
        return (yield from fetch(Call("GET", node_url(ref)), Node, self.policy))

    def node_id(self, node: NodeRef) -> Flow[str]:
        if isinstance(node, Node):
            return node.id
        if node.startswith("/"):
            return (yield from self.get(node)).id
        return node

    def find(self, path: str) -> Flow[Node | None]:
        """The node at `path`, or None when there is none."""
        try:
            return (yield from self.get(path))
        except NotFound:
            return None

    def roots(self) -> Flow[list[Node]]:
        """The root nodes: the internal folders."""
        return (yield from fetch(Call("GET", "nodes/roots/"), list[Node], self.policy))

    def children(self, node: NodeRef, *, page_size: int | None = None) -> Listing[Node]:
        """The node's children in order, every page read as the iteration reaches it."""
        return Listing(self._children_call(node, page_size), Page[Node], self.policy)

    def _children_call(self, node: NodeRef, page_size: int | None) -> Flow[Call]:
        node_id = yield from self.node_id(node)
        return Call("GET", node_url(node_id, "children/"), params=params(page_size=page_size))

    def read(self, node: NodeRef) -> Flow[str]:
        """A document's text."""
        return (yield from self.read_bytes(node)).decode("utf-8")

    def read_bytes(self, node: NodeRef) -> Flow[bytes]:
        """A node's content as bytes (a project file's, or a document's UTF-8)."""
        node_id = yield from self.node_id(node)
        response = yield from exchange(Call("GET", node_url(node_id, "content/")), self.policy)
        return response.content

    def create(
        self,
        parent: NodeRef,
        name: str,
        *,
        type: str = "document",
        description: str = "",
        content: str | bytes | None = None,
        context: dict[str, Any] | None = None,
        date: datetime.date | None = None,
    ) -> Flow[Node]:
        """A new node in the folder `parent`; `content` as text, or bytes for a project file;
        `date`, the day its content speaks of (a datetime's own day)."""
        parent_id = yield from self.node_id(parent)
        body = fields(parent=parent_id, type=type, name=name, description=description, context=context, date=iso(date))
        if isinstance(content, bytes):
            body["content_base64"] = base64.b64encode(content).decode("ascii")
        elif content is not None:
            body["content"] = content
        return (yield from fetch(Call("POST", "nodes/", json=body), Node, self.policy))

    def folder(self, path: str) -> Flow[Node]:
        """The folder at `path`, made (with the folders above it) where missing."""
        found = yield from self.find(path)
        if found is not None:
            return found
        above, _, name = path.rstrip("/").rpartition("/")
        if not above:  # the roots are the internal folders, which nobody makes
            return (yield from self.get(path))
        parent = yield from self.folder(above)
        return (yield from self.create(parent, name, type="folder"))

    def write(
        self,
        path: str,
        content: str | bytes,
        *,
        description: str | None = None,
        type: str = "document",
        version: int | None = None,
        date: datetime.date | None = None,
    ) -> Flow[Node]:
        """The document at `path` made, or its content (and description and date, if given)
        replaced. Missing folders on the way are made. `version`: only if the document is still
        at it."""
        folder, name = split_path(path)
        existing = yield from self.find(path)
        if existing is not None:
            return (
                yield from self.update(existing, content=content, description=description, date=date, version=version)
            )
        parent = yield from self.folder(folder)
        return (
            yield from self.create(parent, name, type=type, description=description or "", content=content, date=date)
        )

    def update(
        self,
        node: NodeRef,
        *,
        content: str | bytes | None = None,
        name: str | None = None,
        description: str | None = None,
        type: str | None = None,
        context: dict[str, Any] | None = None,
        date: datetime.date | None = None,
        version: int | None = None,
    ) -> Flow[Node]:
        """The node renamed, described, retyped, dated, its context or content replaced. With
        `version` (the one read), Conflict if the node has changed since. Metadata and content
        are two requests: the second expects the version the first left."""
        node_id = yield from self.node_id(node)
        changes = fields(name=name, description=description, type=type, context=context, date=iso(date))
        if not changes and content is None:
            raise ValueError("Nothing to update: give content, name, description, type, context or date.")
        updated: Node | None = None
        if changes:
            call = Call("PATCH", node_url(node_id), json=changes, headers=if_match(version))
            updated = yield from fetch(call, Node, self.policy)
            version = updated.version if version is not None else None
        if content is not None:
            body = content.encode("utf-8") if isinstance(content, str) else content
            kind = "text/markdown; charset=utf-8" if isinstance(content, str) else "application/octet-stream"
            headers = {"Content-Type": kind, **if_match(version)}
            updated = yield from fetch(
                Call("PUT", node_url(node_id, "content/"), content=body, headers=headers), Node, self.policy
            )
        assert updated is not None
        return updated

    def move(self, node: NodeRef, parent: NodeRef) -> Flow[Node]:
        """The node moved, with its whole branch, to the end of the folder `parent`'s children."""
        node_id = yield from self.node_id(node)
        parent_id = yield from self.node_id(parent)
        return (
            yield from fetch(Call("POST", node_url(node_id, "move/"), json={"parent": parent_id}), Node, self.policy)
        )

    def delete(self, node: NodeRef) -> Flow[None]:
        """The node deleted, with its whole branch."""
        node_id = yield from self.node_id(node)
        yield from exchange(Call("DELETE", node_url(node_id)), self.policy)

    def retrieve(
        self,
        query: str,
        *,
        start: NodeRef | None = None,
        k: int = 10,
        types: Sequence[str] = (),
        per_node: int | None = None,
        expand_tokens: int | None = None,
        after: datetime.date | None = None,
        before: datetime.date | None = None,
    ) -> Flow[list[Passage]]:
        """The `k` best passages for `query`, best first, under `start` if given, at most
        `per_node` of one node if given (1: the best k nodes), each content passage with the
        passages around it within `expand_tokens` tokens if given (`expanded`), dated from
        `after` to `before` (both days included) if either is given: no LLM."""
        start_id = (yield from self.node_id(start)) if start is not None else None
        body = fields(
            query=query,
            start=start_id,
            k=k,
            types=list(types) or None,
            per_node=per_node,
            expand_tokens=expand_tokens,
            after=iso(after),
            before=iso(before),
        )
        return (yield from fetch(Call("POST", "retrieve/", json=body), Retrieval, self.policy)).results
