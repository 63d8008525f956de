"""A document written by name in a folder: created when the folder has none of that name, else
its content and description written at the version the writer read; and a folder made by its
path with the folders above it, as a node makes its own. The memory tools' writes; each step is
a service of nodes.py."""

import datetime

from django.db import transaction

from memory import selectors
from memory.models import Node
from memory.services.nodes import Keep, node_content_set, node_create, node_update
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
    date: datetime.date | None = None,
    by: Principal,
) -> tuple[Node, bool]:
    """The document written, and whether it was created. `version` is the one the writer read:
    another (or none, when there is no such document) is a Conflict, and nothing is written.
    `date`, the day it speaks of: None keeps the one it has."""
    name = validate_name(name)
    document = selectors.node_children(node=folder).filter(name=name).first()
    if document is not None:
        return _document_update(document, content, description, version, date, by=by), False
    if version is not None:
        raise Conflict(f"'{folder.name}' has no child named '{name}', so it is at no version ({version} sent).")
    created = node_create(
        parent=folder,
        type="document",
        name=name,
        description=description or "",
        content=(content or "").encode(),
        date=date,
        by=by,
    )
    return created, True


def _document_update(
    document: Node,
    content: str | None,
    description: str | None,
    version: int | None,
    date: datetime.date | None,
    *,
    by: Principal,
) -> Node:
    """Content, then description and date, in one transaction: all are written or none."""
    if document.type != "document":
        raise Conflict(f"'{document.name}' is a {document.type} node, not a document; memory_write writes documents.")
    if content is None and description is None and date is None:
        raise InvalidInput("Nothing to write: send content, a description, a date or some of them.")
    with transaction.atomic():
        if content is not None:
            document = node_content_set(node=document, data=content.encode(), expected_version=version, by=by)
            version = None  # checked, and the node is locked until the description is written
        if description is not None or date is not None:
            document = node_update(
                node=document,
                expected_version=version,
                description=description,
                date=Keep.KEEP if date is None else date,
                by=by,
            )
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
