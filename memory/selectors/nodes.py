"""Reads of the memory tree. Subtree and children reads use ranges over the materialized path,
which an index on (depth, path) answers without scanning."""

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import BinaryField, F, QuerySet
from django.db.models.functions import Substr

from memory.models import MAX_DEPTH, Node, NodeContent
from memory.types import ContentKind, get_type
from memsite.compiled import CompiledFirst
from memsite.errors import InvalidInput, NotFound
from memsite.spaces.models import Space

PATH_SEPARATOR = "/"


def _with_size(queryset: QuerySet[Node]) -> QuerySet[Node]:
    return queryset.annotate(content_size=F("content__size"))


# Most API calls begin by reading a node by its id; compiled once (memsite/compiled.py).
_node_by_id = CompiledFirst(
    Node,
    lambda node_id, space_id: _with_size(Node.objects.filter(pk=node_id, space_id=space_id)),
    node_id="-",
    space_id=-1,
)


def node_get(*, space: Space, node_id: str) -> Node:
    """The node with this id in the space: a node of another space is as missing as no node."""
    # An id from a URL may hold NUL, which PostgreSQL refuses in a query: no node has such an id.
    node = _node_by_id(node_id=node_id, space_id=space.pk) if "\x00" not in node_id else None
    if node is None:
        raise NotFound(f"No memory node with id '{node_id}'.")
    return node


def node_fresh(*, node: Node) -> Node:
    """The node's row as it is now, with its content size (after a write to it)."""
    return _with_size(Node.objects.filter(pk=node.pk)).get()


def node_roots(*, space: Space) -> QuerySet[Node]:
    return _with_size(Node.objects.filter(depth=1, space=space)).order_by("path")


def node_children(*, node: Node, after_path: str | None = None) -> QuerySet[Node]:
    """The node's children in insertion order (their paths sort in that order); with
    `after_path`, only those after that child, so that a page is one range read."""
    lower, upper = Node._get_children_path_interval(node.path)
    queryset = Node.objects.filter(depth=node.depth + 1, path__range=(lower, upper))
    if after_path:
        queryset = queryset.filter(path__gt=after_path)
    return _with_size(queryset).order_by("path")


def node_child_before(*, node: Node, child: Node) -> str | None:
    """The path of the child of `node` just before `child`: the key of the page that starts
    at `child`."""
    return node_children(node=node).filter(path__lt=child.path).order_by("-path").values_list("path", flat=True).first()


def nodes_by_id(*, node_ids: Iterable[str]) -> dict[str, Node]:
    """The nodes with these ids as they are now, with their content sizes; a deleted one is left out."""
    return _with_size(Node.objects.all()).in_bulk(list(node_ids))


def node_children_ids(*, node: Node) -> list[str]:
    if node.numchild == 0:
        return []
    return list(node_children(node=node).values_list("id", flat=True))


def node_folders_find(*, space: Space, query: str, exclude: Node | None = None, limit: int) -> list[Node]:
    """At most `limit` folders of the space whose name holds `query` (in any case), in tree
    order, outside `exclude`'s branch: where a move can take it. Without a query, the roots."""
    folders = Node.objects.filter(space=space, is_folder=True)
    folders = folders.filter(name__icontains=query) if query else folders.filter(depth=1)
    if exclude is not None:
        folders = folders.exclude(path__startswith=exclude.path)
    return list(folders.order_by("path")[:limit])


def node_subtree(*, node: Node, include_self: bool = True) -> QuerySet[Node]:
    upper = node.path + Node.alphabet[-1] * (Node._meta.get_field("path").max_length - len(node.path))
    queryset = Node.objects.filter(path__range=(node.path, upper))
    return queryset if include_self else queryset.exclude(pk=node.pk)


def node_ancestors(*, node: Node) -> QuerySet[Node]:
    """From the root down to the parent."""
    paths = [node.path[:end] for end in range(Node.steplen, len(node.path), Node.steplen)]
    return _with_size(Node.objects.filter(path__in=paths)).order_by("depth")


def node_path(*, node: Node, ancestors: list[Node] | None = None) -> str:
    """The node's readable path, such as `/user/user_preferences.md`."""
    chain = list(node_ancestors(node=node)) if ancestors is None else ancestors
    return PATH_SEPARATOR + PATH_SEPARATOR.join([*(a.name for a in chain), node.name])


def path_names(path: str) -> list[str]:
    """The names a readable path walks down, the root's first."""
    names = [part for part in path.strip().split(PATH_SEPARATOR) if part]
    if not path.startswith(PATH_SEPARATOR) or not names:
        raise InvalidInput("A path must be absolute and name at least one node, such as '/user'.")
    return names


def _at_path(names: list[str], *, space_id: int, prefix: str = "") -> dict[str, object]:
    """Lookups for the node at `names` in the space, reached from the nodes queried through
    `prefix` (`parent__` for its children): each level found by (parent_id, name), anchored at
    a root of the space (the nodes below a root are in its space). Without the anchor,
    `parent_id IS NULL AND name = ...`, which the root-name index answers, PostgreSQL scans
    every node of the target depth for the last name (hundreds of ms at a million nodes)."""
    lookups: dict[str, object] = {}
    for name in reversed(names[1:]):
        lookups[f"{prefix}name"] = name
        prefix += "parent__"
    lookups.update({f"{prefix}name": names[0], f"{prefix}space_id": space_id, f"{prefix}parent__isnull": True})
    return lookups


def _levels(names: list[str]) -> dict[str, str]:
    """A path's names as keyword parameters, one a level from the root."""
    return {f"name{level}": name for level, name in enumerate(names)}


@functools.cache
def _node_at(depth: int) -> CompiledFirst[Node]:
    """The read of the node at a path of `depth` names, compiled once (memsite/compiled.py):
    its query joins the table once a name, so each depth has its own."""
    placeholders = _levels([f"-{level}" for level in range(depth)])

    def build(space_id: int, **names: str) -> QuerySet[Node]:
        lookups = _at_path([names[level] for level in placeholders], space_id=space_id)
        return _with_size(Node.objects.filter(depth=depth, **lookups))

    return CompiledFirst(Node, build, space_id=-1, **placeholders)


def node_resolve(*, space: Space, path: str) -> Node:
    """The node at a readable path in the space, found in one query by joining up the parent
    chain."""
    names = path_names(path)
    node = None
    if len(names) <= MAX_DEPTH:
        node = _node_at(len(names))(space_id=space.pk, **_levels(names))
    if node is None:
        raise NotFound(f"No memory node at '{path}'.")
    return node


def _children_at(space: Space, path: str) -> QuerySet[Node]:
    if path.strip() == PATH_SEPARATOR:
        return Node.objects.filter(depth=1, space=space)
    names = path_names(path)
    if len(names) >= MAX_DEPTH:
        return Node.objects.none()
    return Node.objects.filter(depth=len(names) + 1, **_at_path(names, space_id=space.pk, prefix="parent__"))


def node_children_at(*, space: Space, path: str) -> QuerySet[Node]:
    """The children of the node at a readable path (the roots for `/`), in insertion order, in
    one query joining up the parent chain: none when there is no such node, or it has none."""
    return _with_size(_children_at(space, path)).order_by("path")


def node_children_first(*, space: Space, path: str, count: int) -> QuerySet[Node]:
    """The first `count` children of the node at a readable path, in order, as a queryset that
    can still be filtered (a slice cannot be)."""
    first = _children_at(space, path).order_by("path")[:count]
    return _with_size(Node.objects.filter(pk__in=first.values("pk"))).order_by("path")


def node_internal_folder(*, space: Space, name: str) -> Node:
    node = Node.objects.filter(depth=1, space=space, name=name, type="internal_folder").first()
    if node is None:
        raise NotFound(f"The internal folder '{name}' is missing; run the migrations.")
    return node


def node_project_root(*, node: Node) -> Node | None:
    """The project root the node is in (or is), if any."""
    if node.type == "project_root_folder":
        return node
    return node_ancestors(node=node).filter(type="project_root_folder").last()


def node_in_project(*, node: Node) -> bool:
    return node_project_root(node=node) is not None


@dataclass(frozen=True)
class ContentRead:
    data: bytes
    media_type: str
    sha256: str


def node_content_read(*, node: Node) -> ContentRead:
    """The node's content with the media type to serve it as; InvalidInput for a node whose
    type holds none."""
    memory_type = get_type(node.type)
    if memory_type.content is ContentKind.NONE:
        raise InvalidInput(f"'{node.name}' is a {node.type} node; nodes of that type hold no content.")
    row = NodeContent.objects.filter(node_id=node.pk).values_list("data", "sha256").first()
    data, sha256 = (bytes(row[0]), row[1]) if row else (b"", hashlib.sha256(b"").hexdigest())
    media_type = (
        "text/markdown; charset=utf-8" if memory_type.content is ContentKind.TEXT else "application/octet-stream"
    )
    return ContentRead(data=data, media_type=media_type, sha256=sha256)


def node_content(*, node: Node) -> bytes | None:
    data = NodeContent.objects.filter(node_id=node.pk).values_list("data", flat=True).first()
    return None if data is None else bytes(data)


@dataclass(frozen=True)
class ContentSlice:
    data: bytes  # the slice
    size: int  # of the whole content
    sha256: str  # of the whole content


def node_content_slice(*, node_id: str, start: int, length: int, sha256: str | None = None) -> ContentSlice | None:
    """`length` bytes of a node's content from byte `start` (0-based), cut by the database so a
    large content is never read whole; None if the node has no content row or, given `sha256`,
    if its content is no longer that one."""
    rows = NodeContent.objects.filter(node_id=node_id)
    if sha256 is not None:
        rows = rows.filter(sha256=sha256)
    # SUBSTRING counts bytes on PostgreSQL's bytea and SQLite's blob alike, from 1.
    piece = Substr("data", start + 1, length, output_field=BinaryField())
    row = rows.values_list(piece, "size", "sha256").first()
    if row is None:
        return None
    data, size, sha256 = row
    return ContentSlice(b"" if data is None else data, size, sha256)  # SQLite: a slice of nothing is NULL


def project_files(*, project: Node) -> QuerySet[Node]:
    return node_subtree(node=project).filter(type="project_file_bytes").order_by("path")


def node_paths(*, nodes: Iterable[Node]) -> dict[str, str]:
    """Each node's readable path by node id, with every ancestor fetched in one query: a list of
    nodes (an admin page) costs the same whatever its length."""
    nodes = list(nodes)

    def prefixes(node: Node) -> list[str]:
        return [node.path[:end] for end in range(Node.steplen, len(node.path), Node.steplen)]

    wanted = {prefix for node in nodes for prefix in prefixes(node)}
    names = dict(Node.objects.filter(path__in=wanted).values_list("path", "name")) if wanted else {}
    # "?" for an ancestor moved away between the two reads: a listing shows it rather than fail.
    return {
        node.pk: PATH_SEPARATOR + PATH_SEPARATOR.join([*(names.get(p, "?") for p in prefixes(node)), node.name])
        for node in nodes
    }
