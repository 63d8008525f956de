"""Every write to the memory tree. Each function validates in full before it saves, runs in one
transaction, and raises a `memsite.errors.ServiceError` that says what is wrong."""

import datetime
import enum
import functools
import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone
from treebeard.exceptions import PathOverflow

from memory import selectors
from memory.index.writes import index_nodes
from memory.models import MAX_DEPTH, Node, NodeContent, NodeEvent, new_node_id
from memory.permissions import node_permissions, write_under_require
from memory.rows import insert_rows
from memory.selectors import DocumentAt
from memory.services.descriptions import descriptions_queue
from memory.services.events import EVENT_COLUMNS, Author, author_of, deletions, node_events_record
from memory.services.versions import version_start, versions_keep
from memory.types import ContentKind, MemoryType, get_type
from memory.validation import client_node_id, file_mode, validate_description, validate_name
from memsite.errors import Conflict, Forbidden, InvalidInput, NotFound, TooLarge
from memsite.spaces.logic import Role
from memsite.spaces.principals import Principal, role_require

MAX_CHILDREN = len(Node.alphabet) ** Node.steplen - 1


# What an update may change, as `node_update` takes them.
UPDATED_FIELDS = ("name", "description", "type", "context", "date")


class Keep(enum.Enum):
    """What an update leaves as it is, where None is a value it may set (a node's date cleared)."""

    KEEP = "keep"


@dataclass
class NodeSpec:
    """A node to create, with the children to create inside it."""

    name: str
    type: str
    description: str = ""
    context: dict[str, Any] | None = None
    content: bytes | None = None
    children: list["NodeSpec"] = field(default_factory=list)
    mode: int | None = None  # a file's permission bits; None for its type's default
    node_id: str | None = None  # set by node_bulk_create once the node is written


def validate_content(memory_type: MemoryType, data: bytes) -> None:
    limit = settings.MEMSITE_MAX_CONTENT_BYTES
    if len(data) > limit:
        raise TooLarge(f"Content is {len(data)} bytes; the limit is {limit} bytes.")
    memory_type.validate_content(data)


def _check_placement(memory_type: MemoryType, parent: Node | None, *, parent_in_project: bool) -> Node:
    """The parent, once a node of the type may be placed in it (none is placed at the top)."""
    if memory_type.name == "internal_folder":
        raise Forbidden("Internal folders are created only by memsite itself.")
    if parent is None:
        raise InvalidInput("A node needs a parent folder; the roots are the internal folders.")
    if not parent.is_folder:
        raise InvalidInput(f"'{parent.name}' is not a folder, so it cannot hold other nodes.")
    if memory_type.name == "project_root_folder" and not (parent.is_internal and parent.name == "projects"):
        raise InvalidInput("A project_root_folder must be placed directly in the 'projects' folder.")
    if memory_type.name == "project_root_folder" and parent_in_project:
        raise InvalidInput("A project cannot be placed inside another project.")
    if memory_type.name == "project_file_bytes" and not parent_in_project:
        raise InvalidInput("A project_file_bytes node must be placed inside a project_root_folder.")
    return parent


def _project_of(node: Node) -> Node:
    """The project of a node placement has put in one: a project file, or a folder holding some."""
    project = selectors.node_project_root(node=node)
    if project is None:
        raise InvalidInput(f"'{node.name}' is not inside a project.")
    return project


def _lock(node: Node) -> Node:
    """The node's current row, locked for the rest of the transaction (NotFound once another
    transaction has deleted it)."""
    locked = Node.objects.select_for_update().filter(pk=node.pk).first()
    if locked is None:
        raise NotFound(f"No memory node with id '{node.pk}'.")
    return locked


class _RootChanged(Exception):
    """A node went to another tree between being read and its root being locked."""


ROOT_LOCK_ATTEMPTS = 5


def _lock_roots(*nodes: Node) -> dict[str, Node]:
    """Serialize structural writes in the trees of these nodes: lock the roots of the trees they
    are in now, in path order so that two writers never wait on each other, and return their
    current rows by id (a deleted node is left out). A root is taken from the row as it is, not
    as the caller read it: a node moved to another tree since would leave its new tree unlocked.
    One moved between that read and the lock raises `_RootChanged` (see `_retried_on_root_change`):
    taking its new root now, out of order, could deadlock with a writer holding it."""
    ids = [node.pk for node in nodes]
    root_paths = sorted({node.path[: Node.steplen] for node in Node.objects.in_bulk(ids).values()})
    list(Node.objects.select_for_update().filter(path__in=root_paths).order_by("path").values_list("pk"))
    current = Node.objects.in_bulk(ids)
    if any(node.path[: Node.steplen] not in root_paths for node in current.values()):
        raise _RootChanged
    return current


def _retried_on_root_change(write):
    """Run a structural write (a transaction that starts with `_lock_roots`) again, from the
    start, when a node it was given moved to another tree while it took the roots' locks."""

    @functools.wraps(write)
    def retried(**kwargs):
        for _ in range(ROOT_LOCK_ATTEMPTS):
            try:
                return write(**kwargs)
            except _RootChanged:
                pass
        raise Conflict("The nodes kept moving between trees during this change; try again.")

    return retried


def _lock_branch(node: Node) -> None:
    """Lock every row of the node's branch. A create locks only its parent row; without this, a
    child committed while a move rewrites the branch's paths would keep the old path prefix."""
    list(selectors.node_subtree(node=node).select_for_update().values_list("pk", flat=True))


def _check_file_path_free(project: Node, file_path: str, *, exclude: Node | None = None) -> None:
    """A file path is free when no file of the project has it, and none has it as a folder or
    sits where it would need a folder: an export must unpack."""
    parts = file_path.split("/")
    folders = ["/".join(parts[:end]) for end in range(1, len(parts))]
    files = selectors.project_files(project=project)
    if exclude is not None:
        files = files.exclude(pk=exclude.pk)
    if files.filter(context__file_path=file_path).exists():
        raise Conflict(f"The project '{project.name}' already has a file at '{file_path}'.")
    if (
        files.filter(context__file_path__in=folders).exists()
        or files.filter(context__file_path__startswith=f"{file_path}/").exists()
    ):
        raise Conflict(f"'{file_path}' would make a file of the project '{project.name}' a folder, or the reverse.")


def _folders_of(file_path: str) -> list[str]:
    parts = file_path.split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts))]


def _check_file_paths_free(project: Node, file_paths: Collection[str]) -> None:
    """New file paths must not be paths the project has, make one of its files a folder, nor sit
    where one of its files would need a folder: an export must unpack. One read of the project's
    paths, whatever the number of new ones."""
    existing = set(selectors.project_files(project=project).values_list("context__file_path", flat=True))
    if not existing:
        return
    taken = sorted(existing.intersection(file_paths))
    if taken:
        raise Conflict(f"The project '{project.name}' already has files at: {', '.join(taken[:3])}.")
    existing_folders = {folder for path in existing for folder in _folders_of(path)}
    for file_path in sorted(file_paths):
        if file_path in existing_folders or not existing.isdisjoint(_folders_of(file_path)):
            raise Conflict(f"'{file_path}' would make a file of the project '{project.name}' a folder, or the reverse.")


def _check_version(node: Node, expected_version: int | None) -> None:
    if expected_version is not None and expected_version != node.version:
        raise Conflict(
            f"The node was changed by someone else: it is at version {node.version}, "
            f"not {expected_version}. Reload it and try again."
        )


def _content_row(node: Node, data: bytes) -> NodeContent:
    return NodeContent(node=node, data=data, size=len(data), sha256=hashlib.sha256(data).hexdigest())


def content_values(node_id: str, data: bytes | bytearray) -> tuple:
    """A content row for `insert_rows`, in CONTENT_COLUMNS' order."""
    return (node_id, data, len(data), hashlib.sha256(data).hexdigest())


def _name_taken_message(name: str, parent: Node) -> str:
    return f"'{parent.name}' already has a child named '{name}'."


@transaction.atomic
def node_create(
    *,
    parent: Node | None,
    type: str,
    name: str,
    description: str = "",
    context: dict[str, Any] | None = None,
    content: bytes | None = None,
    node_id: str | None = None,
    date: datetime.date | None = None,
    by: Principal,
) -> Node:
    """Create one node, written by `by`, in its space and, for a token limited to a folder, in
    that folder. `node_id` is a client's own id for it (seed 000's clients name their nodes); a
    taken id is a conflict, so that a retried create never makes a second node. `date`: the day
    its content speaks of (docs/retrieval.md, "Time")."""
    memory_type = get_type(type)
    name = validate_name(name)
    description = validate_description(description)
    context = memory_type.validate_context(context)
    if content is not None:
        validate_content(memory_type, content)
    if parent is not None:
        parent = _lock(parent)
        write_under_require(parent, by=by, into=True)
        if parent.depth >= MAX_DEPTH:
            raise InvalidInput(f"The tree is at most {MAX_DEPTH} levels deep.")
    project = selectors.node_project_root(node=parent) if parent is not None else None
    parent = _check_placement(memory_type, parent, parent_in_project=project is not None)
    if Node.objects.filter(parent=parent, name=name).exists():
        raise Conflict(_name_taken_message(name, parent))
    if memory_type.name == "project_file_bytes" and project is not None:  # placement requires a project
        _check_file_path_free(project, context["file_path"])
    if node_id is not None:
        node_id = _client_id_free(client_node_id(node_id))

    node = Node(
        id=node_id or new_node_id(),
        type=memory_type.name,
        is_folder=memory_type.is_folder,
        name=name,
        description=description,
        context=context,
        parent=parent,
        space_id=by.space.pk,
        created_by_id=by.user_id,
        mode=memory_type.file_mode,
        date=date,
    )
    try:
        with transaction.atomic():
            Node.objects.add_child(parent, instance=node)
    except IntegrityError:
        if node_id is not None:  # taken since it was looked at
            _client_id_free(node_id)
        raise Conflict(_name_taken_message(name, parent)) from None
    return _created(node, memory_type, content, author_of(by=by))


def _created(node: Node, memory_type: MemoryType, content: bytes | None, author: Author) -> Node:
    """A node just inserted, with its content row and event written, queued to be indexed and
    described."""
    if memory_type.content is not ContentKind.NONE:
        _content_row(node, content or b"").save()
    if memory_type.keeps_versions:
        version_start(node_id=node.pk, version=1)
    node_events_record(NodeEvent.Action.CREATE, [(node.pk, None, 1)], author=author)
    index_nodes([node.pk])
    descriptions_queue([node.pk])
    node.content_size = len(content or b"") if memory_type.content is not ContentKind.NONE else None
    return node


def _client_id_free(node_id: str) -> str:
    if Node.objects.filter(pk=node_id).exists():
        raise Conflict(f"A node with the id {node_id} exists.")
    return node_id


@dataclass
class _BranchRows:
    """The rows a bulk create copies in, in tree order: nodes, their contents and their events."""

    author: Author
    now: Any
    with_content: bool
    nodes: list[tuple] = field(default_factory=list)
    contents: list[tuple] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)

    def place(self, siblings: Sequence[NodeSpec], parent_id: str, parent_path: str, depth: int, first: int) -> None:
        for position, spec in enumerate(siblings, start=first):
            memory_type = get_type(spec.type)
            node_id = spec.node_id = new_node_id()
            path = Node._get_path(parent_path, depth, position)
            self.nodes.append(self._node_row(spec, node_id, path, depth, parent_id))
            if memory_type.content is not ContentKind.NONE and self.with_content:
                self.contents.append(content_values(node_id, spec.content or b""))
            self.events.append(self.author.row(node_id, NodeEvent.Action.CREATE.value, None, 1, self.now))
            self.place(spec.children, node_id, path, depth + 1, 1)

    def _node_row(self, spec: NodeSpec, node_id: str, path: str, depth: int, parent_id: str) -> tuple:
        memory_type = get_type(spec.type)
        mode = memory_type.file_mode if spec.mode is None else spec.mode
        context = json.dumps(spec.context or {})
        return (node_id, path, depth, len(spec.children), parent_id, memory_type.name, memory_type.is_folder,
                spec.name, spec.description, False, context, self.author.user_id, self.now, self.now, 1, mode,
                self.author.space_id)  # fmt: skip


@transaction.atomic
def node_bulk_create(
    *,
    parent: Node,
    specs: Sequence[NodeSpec],
    defer_content: bool = False,
    by: Principal,
) -> int:
    """Create whole branches under `parent` in a few statements: paths are computed here and
    rows are copied in at once. All specs are validated before anything is written. Returns how
    many nodes were created, and sets each spec's `node_id`.

    With `defer_content`, no content row is written: the caller writes one (`content_values`,
    `insert_rows`) for each node whose type holds content, in the same transaction, and indexes
    those nodes (`index_nodes`). An archive import does, reading the files' data only once the
    whole tree is known to fit. `by` as for `node_create`."""
    parent = _lock(parent)
    write_under_require(parent, by=by, into=True)
    project = selectors.node_project_root(node=parent)
    taken = set(Node.objects.filter(parent=parent).values_list("name", flat=True))
    file_paths = _validate_specs(specs, parent=parent, taken=taken, in_project=project is not None)
    if project is not None and file_paths:
        _check_file_paths_free(project, file_paths)

    last_child = Node.objects.get_last_child(parent) if parent.numchild else None
    first_position = last_child._get_lastpos_in_path() + 1 if last_child else 1
    if first_position + len(specs) - 1 > MAX_CHILDREN:
        raise InvalidInput(f"'{parent.name}' cannot hold that many children.")
    author = author_of(by=by)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    rows = _BranchRows(author=author, now=now, with_content=not defer_content)
    rows.place(specs, parent.pk, parent.path, parent.depth + 1, first_position)
    node_rows = rows.nodes
    try:
        with transaction.atomic():
            insert_rows(Node, NODE_COLUMNS, node_rows)
    except IntegrityError:
        raise Conflict(f"A name is already taken in '{parent.name}'.") from None
    insert_rows(NodeContent, CONTENT_COLUMNS, rows.contents, types=CONTENT_TYPES)
    insert_rows(NodeEvent, EVENT_COLUMNS, rows.events)
    Node.objects.filter(pk=parent.pk).update(numchild=F("numchild") + len(specs))
    # With deferred content, the nodes that hold it are indexed by the caller once it is written.
    index_nodes([row[0] for row in node_rows if not defer_content or get_type(row[5]).content is ContentKind.NONE])
    descriptions_queue([row[0] for row in node_rows])
    return len(node_rows)


NODE_COLUMNS = (
    "id",
    "path",
    "depth",
    "numchild",
    "parent",
    "type",
    "is_folder",
    "name",
    "description",
    "description_auto",
    "context",
    "created_by",
    "created_at",
    "updated_at",
    "version",
    "mode",
    "space",
)
CONTENT_COLUMNS = ("node", "data", "size", "sha256")
CONTENT_TYPES = ("text", "bytea", "int8", "text")  # for a binary COPY: a varchar travels as text


def _validate_specs(specs: Sequence[NodeSpec], *, parent: Node, taken: set[str], in_project: bool) -> set[str]:
    """Validate and normalize specs in place; return the project file paths they create."""
    file_paths: set[str] = set()

    def walk(siblings: Sequence[NodeSpec], under: Node | NodeSpec, depth: int, names: set[str], inside: bool):
        if siblings and depth > MAX_DEPTH:
            raise InvalidInput(f"The tree is at most {MAX_DEPTH} levels deep.")
        for spec in siblings:
            memory_type = get_type(spec.type)
            spec.name = validate_name(spec.name)
            spec.description = validate_description(spec.description)
            spec.context = memory_type.validate_context(spec.context)
            if under is parent:
                _check_placement(memory_type, parent, parent_in_project=inside)
            else:
                _check_spec_placement(memory_type, under, inside=inside)
            if spec.name in names:
                raise Conflict(f"The name '{spec.name}' is used twice in '{under.name}'.")
            names.add(spec.name)
            if spec.content is not None:
                validate_content(memory_type, spec.content)
            if spec.mode is not None:
                if memory_type.file_mode is None:
                    raise InvalidInput(f"'{spec.name}' is not a file, so it has no mode.")
                spec.mode = file_mode(spec.mode)
            if memory_type.name == "project_file_bytes":
                if spec.context["file_path"] in file_paths:
                    raise Conflict(f"Two files share the path '{spec.context['file_path']}'.")
                file_paths.add(spec.context["file_path"])
            if len(spec.children) > MAX_CHILDREN:
                raise InvalidInput(f"'{spec.name}' cannot hold that many children.")
            if spec.children and not memory_type.is_folder:
                raise InvalidInput(f"'{spec.name}' is not a folder, so it cannot hold other nodes.")
            child_inside = inside or memory_type.name == "project_root_folder"
            walk(spec.children, spec, depth + 1, set(), child_inside)

    walk(specs, parent, parent.depth + 1, set(taken), in_project)
    return file_paths


def _check_spec_placement(memory_type: MemoryType, under: NodeSpec, *, inside: bool) -> None:
    if memory_type.name in ("internal_folder", "project_root_folder"):
        raise InvalidInput(f"A {memory_type.name} cannot be created inside '{under.name}'.")
    if memory_type.name == "project_file_bytes" and not inside:
        raise InvalidInput("A project_file_bytes node must be placed inside a project_root_folder.")


@transaction.atomic
def node_update(
    *,
    node: Node,
    expected_version: int | None = None,
    name: str | None = None,
    description: str | None = None,
    type: str | None = None,
    context: dict[str, Any] | None = None,
    date: datetime.date | None | Keep = Keep.KEEP,
    by: Principal,
) -> Node:
    """Rename, describe, retype, date (None: no date) or change the context of a node. With
    `expected_version`, the write happens only if nobody changed the node since that version
    (else Conflict). An update that changes nothing writes nothing, and the version stays.
    `by`'s role says what of an internal folder may change; its token may write only under its
    folder."""
    node = _lock(node)
    _check_version(node, expected_version)
    _check_update_allowed(node, by=by, name=name, type=type, context=context)
    before = (node.name, node.description, node.type, node.context, node.date)

    memory_type = get_type(type if type is not None else node.type)
    if type is not None and type != node.type:
        _check_retype(node, memory_type)
    if name is not None:
        name = validate_name(name)
        if name != node.name and Node.objects.filter(parent_id=node.parent_id, name=name).exists():
            raise Conflict(f"'{name}' is already used by a sibling of this node.")
        node.name = name
    if description is not None:
        description = validate_description(description)
        if description != node.description:
            # A description given by a person or a swarm node is theirs: memsite never rewrites it.
            node.description, node.description_auto = description, False
    if context is not None or type is not None:
        node.context = memory_type.validate_context(context if context is not None else node.context)
        if memory_type.name == "project_file_bytes":
            _check_file_path_free(_project_of(node), node.context["file_path"], exclude=node)
    node.type = memory_type.name
    if date is not Keep.KEEP:
        node.date = date
    if (node.name, node.description, node.type, node.context, node.date) == before:
        return selectors.node_fresh(node=node)
    versions_keep(node=node, version_after=node.version + 1)
    node.version += 1
    try:
        with transaction.atomic():
            node.save(update_fields=[*UPDATED_FIELDS, "description_auto", "version", "updated_at"])
    except IntegrityError:
        raise Conflict(f"'{node.name}' is already used by a sibling of this node.") from None
    changed = (node.pk, node.version - 1, node.version)
    node_events_record(NodeEvent.Action.UPDATE, [changed], author=author_of(by=by))
    if (node.name, node.description, node.date) != (*before[:2], before[4]):
        index_nodes([node.pk], labels_only=True)  # a new date dates its content too
    if before[1] and not node.description:
        descriptions_queue([node.pk])  # emptied: memsite describes it again
    return selectors.node_fresh(node=node)


def _check_update_allowed(
    node: Node,
    *,
    by: Principal,
    name: str | None,
    type: str | None,
    context: dict[str, Any] | None,
) -> None:
    """What the update would change, against what `by` may change; a principal who may not edit
    the node is refused even an update that would change nothing."""
    write_under_require(node, by=by)
    allowed = node_permissions(node, by=by)
    if name is not None and name.strip() != node.name or type is not None and type != node.type:
        allowed.require("rename")
    if context:
        allowed.require("set_context")
    allowed.require("edit")


def _check_retype(node: Node, memory_type: MemoryType) -> None:
    current = get_type(node.type)
    if (memory_type.is_folder, memory_type.content) != (current.is_folder, current.content):
        raise InvalidInput(f"A '{current.name}' node cannot become a '{memory_type.name}': they hold different things.")
    parent = Node.objects.get(pk=node.parent_id)
    _check_placement(memory_type, parent, parent_in_project=selectors.node_in_project(node=parent))
    if node.type == "project_root_folder" and selectors.project_files(project=node).exists():
        raise InvalidInput("A project that holds files cannot be retyped.")


@_retried_on_root_change
@transaction.atomic
def node_move(*, node: Node, parent: Node, by: Principal) -> Node:
    """Move a node, with its whole branch, to the end of another folder's children, in its
    space (a folder of another space is as missing as none). A token limited to a folder moves
    only within it: neither in from outside nor out."""
    if parent.space_id != node.space_id:
        raise NotFound(f"No memory node with id '{parent.pk}'.")
    node_permissions(node, by=by).require("move")
    current = _lock_roots(node, parent)
    for gone in (node, parent):
        if gone.pk not in current:
            raise NotFound(f"No memory node with id '{gone.pk}'.")
    node = current[node.pk]
    _lock_branch(node)
    # Creates in the new parent lock its row: a create and this move must not both take its
    # next child position.
    parent = _lock(parent)
    write_under_require(node, by=by)
    write_under_require(parent, by=by, into=True)
    if parent.pk == node.pk or parent.is_descendant_of(node):
        raise Conflict(f"'{node.name}' cannot be moved into itself or its own branch.")
    if parent.pk == node.parent_id:
        return selectors.node_fresh(node=node)
    memory_type = get_type(node.type)
    target_project = selectors.node_project_root(node=parent)
    _check_placement(memory_type, parent, parent_in_project=target_project is not None)
    if Node.objects.filter(parent=parent, name=node.name).exists():
        raise Conflict(_name_taken_message(node.name, parent))
    if node.depth != parent.depth + 1:
        deepest = selectors.node_subtree(node=node).order_by("-depth").values_list("depth", flat=True).first()
        if deepest - node.depth + parent.depth + 1 > MAX_DEPTH:
            raise InvalidInput(f"The tree is at most {MAX_DEPTH} levels deep.")
    moved_files = selectors.node_subtree(node=node).filter(type="project_file_bytes")
    if node.is_folder and moved_files.exists():
        source_project = _project_of(node)
        if target_project is None:
            raise InvalidInput("Project files can only be moved within projects.")
        if target_project.pk != source_project.pk:
            _check_file_paths_free(target_project, list(moved_files.values_list("context__file_path", flat=True)))
    elif node.type == "project_file_bytes" and target_project is not None and target_project.pk != _project_of(node).pk:
        _check_file_path_free(target_project, node.context["file_path"])

    try:
        Node.objects.move(node, parent, "last-child")
    except PathOverflow:
        raise InvalidInput(f"'{parent.name}' cannot hold more children.") from None
    try:
        with transaction.atomic():
            Node.objects.filter(pk=node.pk).update(parent=parent, version=F("version") + 1, updated_at=timezone.now())
    except IntegrityError:
        raise Conflict(_name_taken_message(node.name, parent)) from None
    moved = (node.pk, node.version, node.version + 1)
    node_events_record(NodeEvent.Action.MOVE, [moved], author=author_of(by=by))
    return selectors.node_fresh(node=node)


@_retried_on_root_change
@transaction.atomic
def node_delete(*, node: Node, by: Principal) -> int:
    """Delete a node and its whole branch; returns how many nodes were deleted."""
    node_permissions(node, by=by).require("delete")
    locked = _lock_roots(node).get(node.pk)
    if locked is None:
        return 0
    node = locked
    write_under_require(node, by=by)
    _lock_branch(node)
    author = author_of(by=by)
    node_events_record(NodeEvent.Action.DELETE, deletions([node.pk]), author=author)
    _deleted, per_model = Node.objects.filter(pk=node.pk).delete()
    return per_model.get(Node._meta.label, 0)


@transaction.atomic
def node_content_set(*, node: Node, data: bytes, expected_version: int | None = None, by: Principal) -> Node:
    node = _lock(node)
    write_under_require(node, by=by)
    node_permissions(node, by=by).require("write_content")
    memory_type = get_type(node.type)
    validate_content(memory_type, data)
    _check_version(node, expected_version)
    versions_keep(node=node, version_after=node.version + 1)
    _content_row(node, data).save()
    Node.objects.filter(pk=node.pk).update(version=F("version") + 1, updated_at=timezone.now())
    written = (node.pk, node.version, node.version + 1)
    node_events_record(NodeEvent.Action.CONTENT, [written], author=author_of(by=by))
    index_nodes([node.pk])
    descriptions_queue([node.pk])
    return selectors.node_fresh(node=node)


@transaction.atomic
def node_restore(*, node: Node, version: int, expected_version: int | None = None, by: Principal) -> Node:
    """Make a text document read again as it did at `version`: a new version with that one's
    name, description and text, recorded as a restore; no version is rewritten. Checked as an
    edit is: the role, the token's folder, what the node allows, and `expected_version` (else
    Conflict). A document that already reads as that version did is left as it is, its
    version with it, as an update that changes nothing is."""
    # Not only a request's method says a restore writes: the role is checked here too.
    role_require(by, Role.EDITOR)
    node = _lock(node)
    write_under_require(node, by=by)
    _check_version(node, expected_version)
    then = selectors.node_version(node=node, version=version)
    now = selectors.node_version(node=node, version=node.version)
    _check_restore_allowed(node, then, now, by=by)
    if then.same_as(now):
        return selectors.node_fresh(node=node)
    versions_keep(node=node, version_after=node.version + 1)
    try:
        with transaction.atomic():
            Node.objects.filter(pk=node.pk).update(
                name=then.name,
                description=then.description,
                description_auto=then.description_auto,
                version=F("version") + 1,
                updated_at=timezone.now(),
            )
    except IntegrityError:
        raise Conflict(f"'{then.name}' is already used by a sibling of this node.") from None
    if then.data != now.data:
        _content_row(node, then.data).save()
    restored = (node.pk, node.version, node.version + 1)
    node_events_record(NodeEvent.Action.RESTORE, [restored], author=author_of(by=by), restored_from=version)
    index_nodes([node.pk], labels_only=then.data == now.data)
    descriptions_queue([node.pk])
    return selectors.node_fresh(node=node)


def _check_restore_allowed(node: Node, then: DocumentAt, now: DocumentAt, *, by: Principal) -> None:
    """What the restore would change, against what `by` may change of the node."""
    allowed = node_permissions(node, by=by)
    allowed.require("edit")
    if then.name != now.name:
        allowed.require("rename")
        if Node.objects.filter(parent_id=node.parent_id, name=then.name).exclude(pk=node.pk).exists():
            raise Conflict(f"'{then.name}' is already used by a sibling of this node.")
    if then.data != now.data:
        allowed.require("write_content")
        validate_content(get_type(node.type), then.data)
