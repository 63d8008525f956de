"""A document written by name in a folder: created when the folder has none of that name, else
its content and description written at the version the writer read; and a folder made by its
path with the folders above it, as a node makes its own. The memory tools' writes; each step is
a service of nodes.py."""

from django.db import transaction

from memory import selectors
from memory.models import Node
from memory.services.nodes import node_content_set, node_create, node_update
from memory.types import FOLDER
from memory.validation import validate_name
from memsite.errors import Conflict, InvalidInput
from memsite.spaces.principals import Principal


def document_write(
    *,
    folder: Node,
    name: str,
    content: str | None,
    description: str | None,
    version: int | None,
    by: Principal,
) -> tuple[Node, bool]:
    """The document written, and whether it was created. `version` is the one the writer read:
    another (or none, when there is no such document) is a Conflict, and nothing is written."""
    name = validate_name(name)
    document = selectors.node_children(node=folder).filter(name=name).first()
    if document is not None:
        return _document_update(document, content, description, version, by=by), False
    if version is not None:
        raise Conflict(f"'{folder.name}' has no child named '{name}', so it is at no version ({version} sent).")
    created = node_create(
        parent=folder,
        type="document",
        name=name,
        description=description or "",
        content=(content or "").encode(),
        by=by,
    )
    return created, True


def _document_update(
    document: Node, content: str | None, description: str | None, version: int | None, *, by: Principal
) -> Node:
    """Content, then description, in one transaction: both are written or neither."""
    if document.type != "document":
        raise Conflict(f"'{document.name}' is a {document.type} node, not a document; memory_write writes documents.")
    if content is None and description is None:
        raise InvalidInput("Nothing to write: send content, a description or both.")
    with transaction.atomic():
        if content is not None:
            document = node_content_set(node=document, data=content.encode(), expected_version=version, by=by)
            version = None  # checked, and the node is locked until the description is written
        if description is not None:
            document = node_update(node=document, expected_version=version, description=description, by=by)
    return document


@transaction.atomic
def folder_make(*, path: str, by: Principal) -> Node:
    """The folder at the readable `path`, made where missing with the folders above it (as
    `mkdir -p`), all or none: a refused one (a token's folder, a name) leaves none made. The
    top of every path is an internal folder, which nobody makes (NotFound if it is not there)."""
    first, *below = selectors.path_names(path)
    folder = selectors.node_resolve(space=by.space, path=f"/{first}")
    for name in below:
        folder = _child_made(folder, name, by=by)
    if not folder.is_folder:
        raise InvalidInput(f"'{path}' is a {folder.type}, not a folder.")
    return folder


def _child_made(folder: Node, name: str, *, by: Principal) -> Node:
    """The child folder `name` of `folder`, made if missing; made by another writer meanwhile
    (two nodes' first writes at once), it is theirs that is given."""
    found = selectors.node_children(node=folder).filter(name=name).first()
    if found is not None:
        return found
    try:
        return node_create(parent=folder, type=FOLDER.name, name=name, by=by)
    except Conflict:
        found = selectors.node_children(node=folder).filter(name=name).first()
        if found is None:
            raise
        return found
