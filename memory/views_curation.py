"""The memory browser's curation: edit a document's text in its panel, move a node with a
folder picker, read a node's history, compare a document's versions and restore one.
Explained in docs/memory.md."""

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory import selectors, services
from memory.forms import FolderFindForm, NodeMoveForm, NodeRestoreForm
from memory.logic.diff import CHARS_SHOWN, LINES_COMPARED, LINES_SHOWN
from memory.logic.tree import TreeChange
from memory.models import NODE_ID_PREFIX, Node, NodeEvent
from memory.permissions import node_permissions
from memory.selectors.nodes import PATH_SEPARATOR
from memory.types import ContentKind
from memory.views import (
    BROWSER,
    EDITOR,
    PLAIN_TEXT,
    _detail_context,
    _detail_response,
    _memory_type,
    _node_or_404,
    _parent,
    _space,
    _tree_context,
    _with_tree,
    _write_permissions,
    editor_context,
    editor_too_large,
)
from memsite.errors import InvalidInput, ServiceError
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.logic import Role, role_allows
from memsite.spaces.middleware import required_role
from memsite.spaces.principals import principal_of

# The picker shows this many folders at most: a name that matches more needs more letters.
FOLDERS_SHOWN = 20
HISTORY_PAGE = 25
# The radio buttons of a folder picker, which its find form fills (templates/memory/folder_picker.html).
FOLDER_CHOICES = "memory/folder_picker.html#choices"
EVENT_KEY = re.compile(r"^[0-9]{1,18}$")  # an event's id, within a 64-bit integer
VERSION_KEY = re.compile(r"^[0-9]{1,10}$")
VERSION_PAGE = "memory/version.html"
# What the version page says of a diff it cut (memory.logic.diff).
DIFF_LIMITS = {
    "lines_shown": f"{LINES_SHOWN:,}",
    "chars_shown": f"{CHARS_SHOWN:,}",
    "lines_compared": f"{LINES_COMPARED:,}",
}
# The writes that change what a document reads as: those whose versions a diff can show.
CHANGES = {NodeEvent.Action.CREATE, NodeEvent.Action.UPDATE, NodeEvent.Action.CONTENT, NodeEvent.Action.RESTORE}


def _full_page(request: HtmxHttpRequest, node: Node, **extra: object) -> HttpResponse:
    """The memory page open at the node, with `extra` in its panel (for browsers without htmx)."""
    return render_page(request, BROWSER, {**_with_tree(request, node, _detail_context(request, node)), **extra})


# -- a document's text -------------------------------------------------------------------------


@required_role(Role.EDITOR)  # a GET, but only for those who may write the text
@require_GET
@login_required
def document_edit(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    """The editor of a text document, for its panel (htmx asks for it once opened)."""
    node = _node_or_404(request, node_id)
    memory_type = _memory_type(node)
    if memory_type is None or memory_type.content is not ContentKind.TEXT:
        return HttpResponse(f"'{node.name}' holds no text to edit.", status=400, content_type=PLAIN_TEXT)
    if not _write_permissions(request, node, memory_type)["can_edit_content"]:
        return HttpResponse(f"You may not edit the text of '{node.name}'.", status=403, content_type=PLAIN_TEXT)
    if too_large := editor_too_large(node):
        return HttpResponse(too_large, status=413, content_type=PLAIN_TEXT)
    context = {**editor_context(node), "panel": True}
    if request.htmx:
        return render_page(request, EDITOR, context)
    return _full_page(request, node, editing=context)


# -- moving a node -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FolderChoice:
    folder: Node
    path: str
    current: bool  # the moved node's parent now: moving there changes nothing
    named: bool = False  # the query was its id or path: it is chosen already


@dataclass(frozen=True)
class Picker:
    """A form's folder picker: the folders found for `query`, as radio buttons named `field`."""

    field: str
    legend: str
    query: str = ""
    error: str = ""
    choices: tuple[FolderChoice, ...] = ()
    more: bool = False  # more folders match than are shown


def folder_picker(
    request: HtmxHttpRequest, data: Mapping[str, str], *, field: str, legend: str, moving: Node | None = None
) -> tuple[Picker, int]:
    """The folders whose name holds `data["q"]`, outside the branch of the node `moving` (whose
    folder now is shown but cannot be chosen). An id or an absolute path, pasted or typed by
    those who know it, finds its folder alone, chosen already."""
    form = FolderFindForm(data)
    if not form.is_valid():
        return Picker(field, legend, query=str(data.get("q", ""))[:255], error=form_error(form)), 400
    query = form.cleaned_data["q"].strip()
    named = _named_folder(request, query, moving)
    folders = (
        [named]
        if named
        else selectors.node_folders_find(space=_space(request), query=query, exclude=moving, limit=FOLDERS_SHOWN + 1)
    )
    paths = selectors.node_paths(nodes=folders[:FOLDERS_SHOWN])
    here = moving.parent_id if moving else None
    choices = tuple(
        FolderChoice(f, paths[f.pk], current=f.pk == here, named=named is not None) for f in folders[:FOLDERS_SHOWN]
    )
    return Picker(field, legend, query=query, choices=choices, more=len(folders) > FOLDERS_SHOWN), 200


def _named_folder(request: HtmxHttpRequest, query: str, moving: Node | None) -> Node | None:
    """The folder `query` names by its id or its absolute path, if it may be picked."""
    if not query.startswith((PATH_SEPARATOR, NODE_ID_PREFIX)):
        return None
    try:
        node = (
            selectors.node_resolve(space=_space(request), path=query)
            if query.startswith(PATH_SEPARATOR)
            else selectors.node_get(space=_space(request), node_id=query)
        )
    except ServiceError:  # no such node: the query is then a part of a name
        return None
    inside_moved = moving is not None and node.path.startswith(moving.path)
    return node if node.is_folder and not inside_moved else None


def _move_picker(request: HtmxHttpRequest, node: Node, data: Mapping[str, str]) -> tuple[Picker, int]:
    return folder_picker(request, data, field="parent", legend=f"Move '{node.name}' into", moving=node)


@require_GET
@login_required
def node_move_folders(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    """The folders a node can be moved into, by name, for the move form's picker."""
    node = _node_or_404(request, node_id)
    picker, status = _move_picker(request, node, request.GET)
    if request.htmx:
        return render_page(request, FOLDER_CHOICES, {"picker": picker}, status=status)
    return _full_page(request, node, picker=picker, moving=True)


@require_POST
@login_required
def node_move(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    node = _node_or_404(request, node_id)
    form = NodeMoveForm(request.POST)

    def refused(message: str, status: int) -> HttpResponse:
        """The panel with the refusal and the picker open, at the top folders, to choose again."""
        picking = {"moving": True, "picker": _move_picker(request, node, {})[0]}
        return _detail_response(request, node, error=message, status=status, extra=picking)

    if not form.is_valid():
        return refused(form_error(form), 400)
    old_parent = _parent(node)
    try:
        new_parent = selectors.node_get(space=_space(request), node_id=form.cleaned_data["parent"])
        moved = services.node_move(node=node, parent=new_parent, by=principal_of(request))
    except ServiceError as error:
        return refused(error.message, error.status)
    if old_parent is None or old_parent.pk == new_parent.pk:
        return _detail_response(request, moved, message=f"'{node.name}' is already in '{new_parent.name}'.")
    where = selectors.node_path(node=new_parent)
    change = TreeChange(removed=(node.pk,), added=((new_parent.pk, node.pk),), counted=(old_parent.pk, new_parent.pk))
    return _detail_response(request, moved, message=f"Moved '{node.name}' to {where}.", change=change)


# -- a node's history --------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryPage:
    node_id: str
    events: list[NodeEvent]
    before: int | None  # the id the page starts below; None for the newest
    older: int | None  # the key of the next page, if there is one
    current: int | None = None  # the node's version now; None once it is deleted
    # The events that changed a document to a version still kept: their links show the change.
    comparable: frozenset[int] = frozenset()
    can_restore: bool = False


def _history_page(request: HtmxHttpRequest, node: Node | None, page: HistoryPage) -> HistoryPage:
    """The page with what its links need: the node's version now, which versions are kept, and
    whether restores are offered. A deleted node's has none."""
    if node is None:
        return page
    versions = [event.version_after for event in page.events if event.version_after is not None]
    kept = selectors.node_versions_kept(node=node, versions=versions)
    comparable = frozenset(event.pk for event in page.events if event.action in CHANGES and event.version_after in kept)
    return replace(page, current=node.version, comparable=comparable, can_restore=_may_restore(request, node))


def _may_restore(request: HtmxHttpRequest, node: Node) -> bool:
    """Whether restores are offered: to writers, of a node whose edits `node_restore` allows."""
    principal = principal_of(request)
    return role_allows(principal.role, Role.EDITOR) and node_permissions(node, by=principal).edit


def _node_or_none(request: HtmxHttpRequest, node_id: str) -> Node | None:
    try:
        return selectors.node_get(space=_space(request), node_id=node_id)
    except ServiceError:
        return None


@require_GET
@login_required
def node_history(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    """Who wrote the node, what and when, newest first, a page at a time, with links to what
    each write changed of a document; a deleted node's history too, on a page of its own."""
    before_text = request.GET.get("before") or None
    if before_text is not None and not EVENT_KEY.match(before_text):
        return HttpResponse("The 'before' key is not an event number.", status=400, content_type=PLAIN_TEXT)
    before = int(before_text) if before_text is not None else None
    try:
        events = selectors.node_history(space=_space(request), node_id=node_id, before=before)
    except ServiceError as error:
        return HttpResponse(error.message, status=error.status, content_type=PLAIN_TEXT)
    rows = list(events.order_by("-id")[: HISTORY_PAGE + 1])
    older = rows[HISTORY_PAGE - 1].pk if len(rows) > HISTORY_PAGE else None
    node = _node_or_none(request, node_id)
    page = _history_page(request, node, HistoryPage(node_id, rows[:HISTORY_PAGE], before, older))
    if request.htmx:
        return render_page(request, f"{BROWSER}#history", {"history": page})
    if node is None:
        return render_page(request, BROWSER, {**_tree_context(request), "history": page, "gone": True})
    return _full_page(request, node, history=page)


# -- a document's versions ---------------------------------------------------------------------


def _version_page(
    request: HtmxHttpRequest,
    node: Node,
    version: int,
    against: int | None,
    *,
    restoring: bool = False,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The version against `against` (by default the version before it), and, `restoring`, the
    form that restores it."""
    try:
        compared = selectors.node_version_diff(node=node, version=version, against=against)
    except ServiceError as refusal:
        return HttpResponse(refusal.message, status=refusal.status, content_type=PLAIN_TEXT)
    context = {
        "node": node,
        "compared": compared,
        "can_restore": version != node.version and _may_restore(request, node),
        "restoring": restoring,
        "error": error,
        "limits": DIFF_LIMITS,
    }
    return render_page(request, VERSION_PAGE, context, status=status)


@require_GET
@login_required
def node_version(request: HtmxHttpRequest, node_id: str, version: int) -> HttpResponse:
    """A version of a document, and what changed to it from another: the version before it,
    unless `?against=` names another (the history links the version now)."""
    node = _node_or_404(request, node_id)
    against = request.GET.get("against") or None
    if against is not None and not VERSION_KEY.match(against):
        return HttpResponse("'against' is not a version number.", status=400, content_type=PLAIN_TEXT)
    return _version_page(request, node, version, int(against) if against is not None else None)


@required_role(Role.EDITOR)  # its GET asks to confirm a write
@require_http_methods(["GET", "POST"])
@login_required
def node_restore(request: HtmxHttpRequest, node_id: str, version: int) -> HttpResponse:
    """GET: what restoring the version changes (the version against the one now), to confirm;
    POST: restore it, at the version the page was shown at."""
    node = _node_or_404(request, node_id)
    if request.method == "GET":
        return _version_page(request, node, version, node.version, restoring=True)
    form = NodeRestoreForm(request.POST)
    try:
        if not form.is_valid():
            raise InvalidInput(form_error(form))
        restored = services.node_restore(
            node=node, version=version, expected_version=form.cleaned_data["version"], by=principal_of(request)
        )
    except ServiceError as error:
        return _version_page(
            request, node, version, node.version, restoring=True, error=error.message, status=error.status
        )
    if restored.version == node.version:
        messages.success(request, f"'{node.name}' already reads as version {version} did: nothing was written.")
    else:
        messages.success(request, f"Restored version {version} of '{restored.name}' as version {restored.version}.")
    return redirect("memory:node_detail", node_id=node.pk)
