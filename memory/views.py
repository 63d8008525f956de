"""The dashboard: a tree browser, a node panel and the user's documents, as small htmx views.
Explained in docs/memory.md."""

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import content_disposition_header
from django.utils.safestring import SafeString
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from memory import selectors, services
from memory.api.http import archive_body_limit
from memory.forms import (
    ArchiveUploadForm,
    DocumentEditForm,
    FindForm,
    MarkdownPreviewForm,
    NodeCreateForm,
    NodeUpdateForm,
)
from memory.index.retrieve import Hit, retrieve
from memory.logic.find import worth_listing
from memory.logic.tree import TreeChange, shown_ids
from memory.models import Node
from memory.permissions import node_permissions
from memory.rendering import is_binary, markdown_to_html, marked, text_preview
from memory.services.archives import ImportResult
from memory.types import ContentKind, MemoryType, get_type
from memsite.api import refuse_longer_than
from memsite.errors import InvalidInput, ServiceError
from memsite.limits import Busy, max_body_bytes, wait_slots
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.logic import Role, role_allows
from memsite.spaces.middleware import required_role
from memsite.spaces.models import Space
from memsite.spaces.principals import principal_of

BROWSER = "memory/browser.html"
FIND = "memory/find.html"
PREFERENCES = "memory/user_preferences.html"
EDITOR = "memory/editor.html"
USER_FOLDER = "user"
DEFAULT_USER_DOCUMENT = "user_preferences.md"
# The user folder's documents are shown as tabs; more than this is not a tab bar any more.
MAX_USER_DOCUMENTS = 50
PATH_KEY = re.compile(r"^[0-9A-Z]{1,255}$")
FIND_RESULTS = 20
# A passage's character offsets in a node's text, as the search box links to it: "?at=120-480".
AT = re.compile(r"^(\d{1,10})-(\d{1,10})$")
# For answers that carry user text outside a template: never read as HTML.
PLAIN_TEXT = "text/plain; charset=utf-8"
# Sent by static/js/memory-tree.js when a panel link opens a node the tree does not show.
TREE_REVEAL_HEADER = "X-Tree-Reveal"
# The editor puts a document's whole text in its page: a larger one is not opened in it.
EDITOR_MAX_BYTES = 1_000_000
# A form's fields beside a document's text: the CSRF token, the version, the panel's flag.
FORM_FIELDS_BYTES = 4 * 1024


# -- helpers -----------------------------------------------------------------------------------


def _space(request: HtmxHttpRequest) -> Space:
    return principal_of(request).space


def _node_or_404(request: HtmxHttpRequest, node_id: str) -> Node:
    try:
        return selectors.node_get(space=_space(request), node_id=node_id)
    except ServiceError as error:
        raise Http404(error.message) from None


def _memory_type(node: Node) -> MemoryType | None:
    try:
        return get_type(node.type)
    except InvalidInput:
        return None  # a type that was unregistered since the node was written


@dataclass(frozen=True)
class ChildrenPage:
    folder: Node
    nodes: list[Node]
    next_after: str | None  # the path key of the next page, if there is one


def _children_page(folder: Node, *, after: str | None = None) -> ChildrenPage:
    """One page of a folder's children, keyed by path so that a page is one range read."""
    size = settings.MEMSITE_CHILDREN_PAGE_SIZE
    nodes = list(selectors.node_children(node=folder, after_path=after)[: size + 1])
    more = len(nodes) > size
    nodes = nodes[:size]
    return ChildrenPage(folder=folder, nodes=nodes, next_after=nodes[-1].path if more else None)


def _page_holding(folder: Node, child: Node) -> ChildrenPage:
    """The folder's first page of children if it holds `child`, else the page starting at it."""
    page = _children_page(folder)
    if any(node.pk == child.pk for node in page.nodes):
        return page
    return _children_page(folder, after=selectors.node_child_before(node=folder, child=child))


def _tree_context(request: HtmxHttpRequest, node: Node | None = None, ancestors: list[Node] | None = None) -> dict:
    """The tree of a whole page: the roots, and with a node, each folder down to it open (a
    deep link shows where the node is)."""
    chain = [*(ancestors or []), node] if node is not None else []
    opened = {folder.pk: _page_holding(folder, child) for folder, child in zip(chain, chain[1:], strict=False)}
    return {"roots": selectors.node_roots(space=_space(request)), "opened": opened}


def _with_tree(request: HtmxHttpRequest, node: Node, context: dict[str, Any]) -> dict[str, Any]:
    """A node's panel (`_detail_context`) with the tree of a whole page, open down to it."""
    return {**context, **_tree_context(request, node, context["ancestors"])}


@dataclass(frozen=True)
class TreeSwaps:
    """The out-of-band swaps that bring the page's tree up to date after a write."""

    added: list[tuple[str, Node]]  # (folder id, its new item)
    removed: tuple[str, ...]
    counted: list[Node]
    renamed: list[Node]
    refilled: list[ChildrenPage]


def _tree_swaps(request: HtmxHttpRequest, change: TreeChange) -> TreeSwaps:
    """The swaps of `change` for the items the page's tree shows (its write forms send them):
    htmx finds no target for the others."""
    shown, paged = (shown_ids(request.POST.getlist(name)) for name in ("shown", "paged"))
    change = replace(change, shown=shown, paged=paged).visible()
    wanted = {item for _, item in change.added} | {*change.counted, *change.renamed, *change.refilled}
    nodes = selectors.nodes_by_id(node_ids=wanted) if wanted else {}
    return TreeSwaps(
        added=[(folder, nodes[item]) for folder, item in change.added if item in nodes],
        removed=change.removed,
        counted=[nodes[folder] for folder in change.counted if folder in nodes],
        renamed=[nodes[item] for item in change.renamed if item in nodes],
        refilled=[_children_page(nodes[folder]) for folder in change.refilled if folder in nodes],
    )


@dataclass(frozen=True)
class Preview:
    kind: str  # "none", "markdown", "text", "binary"
    size: int | None = None
    text: str = ""
    html: str = ""
    truncated: bool = False


def _preview(node: Node, memory_type: MemoryType | None) -> Preview:
    if memory_type is None or memory_type.content is ContentKind.NONE:
        return Preview(kind="none")
    data = selectors.node_content(node=node) or b""
    if is_binary(data):
        return Preview(kind="binary", size=len(data))
    text, truncated = text_preview(data)
    if memory_type.content is ContentKind.TEXT:
        return Preview(kind="markdown", size=len(data), text=text, html=markdown_to_html(text), truncated=truncated)
    return Preview(kind="text", size=len(data), text=text, truncated=truncated)


@dataclass(frozen=True)
class MatchedPassage:
    """The passage a search result links to, shown in the node panel."""

    start: int
    end: int
    text: str
    # A plain-text preview holding the passage is shown with the passage marked in place:
    # these are the preview's text before and after it.
    before: str = ""
    after: str = ""
    in_place: bool = False


def _matched_passage(node: Node, at: str | None, preview: Preview) -> MatchedPassage | None:
    """The passage `at` ("start-end") points to; None when `at` is absent or malformed, or
    points past the node's text or at no passage of it (the content changed since, perhaps)."""
    match = AT.match(at or "")
    if match is None or preview.kind not in ("markdown", "text"):
        return None
    start, end = int(match[1]), int(match[2])
    if start >= end:
        return None
    # The preview is the content's first bytes, decoded as the index decodes them: a passage
    # within it needs no read. (A cut preview's last character may be half of one.)
    if end <= len(preview.text) - (1 if preview.truncated else 0):
        text = preview.text
        if preview.kind == "text":
            return MatchedPassage(start, end, text[start:end], before=text[:start], after=text[end:], in_place=True)
        return MatchedPassage(start, end, text[start:end])
    # Past the preview, the index holds the passage's text as it cut it.
    indexed = selectors.passage_text(node_id=node.pk, start=start, end=end)
    return MatchedPassage(start, end, indexed) if indexed is not None else None


def _write_permissions(request: HtmxHttpRequest, node: Node, memory_type: MemoryType | None) -> dict[str, bool]:
    """The panel's write actions the request's principal may take: none for a reader, and of
    an internal folder only what `node_permissions` allows."""
    principal = principal_of(request)
    writer = role_allows(principal.role, Role.EDITOR)
    allowed = node_permissions(node, by=principal)
    text = memory_type is not None and memory_type.content is ContentKind.TEXT
    return {
        "can_rename": writer and allowed.rename,
        "can_describe": writer and allowed.edit,
        "can_delete": writer and allowed.delete,
        "can_create": writer and node.is_folder,
        "can_move": writer and allowed.move,
        "can_edit_content": writer and allowed.write_content and text,
        "can_upload": writer and node.type == "project_root_folder",
    }


def _detail_context(request: HtmxHttpRequest, node: Node, *, after: str | None = None) -> dict[str, Any]:
    """The node's panel; a folder's lists a page of its children, the one after `after`."""
    memory_type = _memory_type(node)
    return {
        "node": node,
        "memory_type": memory_type,
        "ancestors": list(selectors.node_ancestors(node=node)),
        "preview": _preview(node, memory_type),
        "context_json": json.dumps(node.context, indent=2, ensure_ascii=False, sort_keys=True),
        **_write_permissions(request, node, memory_type),
        "children": _children_page(node, after=after) if node.is_folder else None,
        "children_after": after,
        "create_form": NodeCreateForm(initial={"type": "document"}),
        "upload_form": ArchiveUploadForm(),
    }


def _detail_response(
    request: HtmxHttpRequest,
    node: Node,
    *,
    message: str = "",
    error: str = "",
    status: int = 200,
    change: TreeChange | None = None,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    """The node's panel after a write. htmx swaps it in, along with what `change` changed in
    the tree (out of band), for the items the page's tree shows. Other requests are redirected
    to the node's page on success, or shown the page with the error. `extra`: more of the
    panel's context (a form to show again)."""
    if not request.htmx and not error:
        messages.success(request, message)
        return redirect("memory:node_detail", node_id=node.pk)
    context = {**_detail_context(request, node), "message": message, "error": error, **(extra or {})}
    if not request.htmx:
        return render_page(request, BROWSER, _with_tree(request, node, context), status=status)
    if change is not None:
        context["tree_swaps"] = _tree_swaps(request, change)
    response = render_page(request, f"{BROWSER}#detail_response", context, status=status)
    if not error:
        push_url(response, reverse("memory:node_detail", args=[node.pk]))
    return response


def _parent(node: Node) -> Node | None:
    return selectors.node_ancestors(node=node).last()


# -- the tree browser --------------------------------------------------------------------------


@require_GET
@login_required
def browser(request: HtmxHttpRequest) -> HttpResponse:
    return render_page(request, BROWSER, _tree_context(request))


@require_GET
@login_required
def node_detail(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    node = _node_or_404(request, node_id)
    after = request.GET.get("after") or None
    if after is not None and not PATH_KEY.match(after):
        return HttpResponse("The 'after' key is not a tree path.", status=400, content_type=PLAIN_TEXT)
    context = _detail_context(request, node, after=after)
    context["passage"] = _matched_passage(node, request.GET.get("at"), context["preview"])
    if not request.htmx or request.htmx.history_restore_request:
        return render_page(request, BROWSER, _with_tree(request, node, context))
    if request.headers.get(TREE_REVEAL_HEADER):  # the tree does not show the node: open it down to it
        response = render_page(request, f"{BROWSER}#detail_revealed", _with_tree(request, node, context))
    else:
        response = render_page(request, f"{BROWSER}#detail", context)
    patch_vary_headers(response, [TREE_REVEAL_HEADER])
    return response


# -- the search box ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    hit: Hit
    snippet: SafeString  # escaped, with the query's words marked
    url: str  # the node's panel, at the passage for a piece of its content


@dataclass(frozen=True)
class FindResults:
    query: str = ""
    error: str = ""
    found: tuple[Found, ...] = ()


def _found(hit: Hit, query: str) -> Found:
    url = reverse("memory:node_detail", args=[hit.node_id])
    if hit.kind == "content":
        url += f"?at={hit.start}-{hit.end}#passage"
    return Found(hit=hit, snippet=marked(hit.snippet, query), url=url)


@require_GET
@login_required
def find(request: HtmxHttpRequest) -> HttpResponse:
    """The memory page's search box: the best passages for the query, by full text and
    embeddings fused, as `POST /api/retrieve/` ranks them, less those far from it in meaning
    that no word of it found (memory/logic/find.py)."""
    form = FindForm(request.GET)
    if not form.is_valid():
        results, status = FindResults(query=request.GET.get("q", ""), error=form_error(form)), 400
    else:
        query = form.cleaned_data["q"]
        hits = retrieve(query=query, by=principal_of(request), k=FIND_RESULTS) if query else []
        hits = worth_listing(hits)
        results, status = FindResults(query=query, found=tuple(_found(hit, query) for hit in hits)), 200
    if request.htmx:
        return render_page(request, f"{FIND}#results", {"find": results}, status=status)
    return render_page(request, BROWSER, {"find": results, **_tree_context(request)}, status=status)


@require_GET
@login_required
def node_children(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    folder = _node_or_404(request, node_id)
    if not request.htmx:
        return redirect("memory:node_detail", node_id=folder.pk)
    after = request.GET.get("after") or None
    if not folder.is_folder:
        return HttpResponse(f"'{folder.name}' is not a folder.", status=400, content_type=PLAIN_TEXT)
    if after is not None and not PATH_KEY.match(after):
        return HttpResponse("The 'after' key is not a tree path.", status=400, content_type=PLAIN_TEXT)
    return render_page(request, f"{BROWSER}#children", {"page": _children_page(folder, after=after)})


@require_POST
@login_required
def node_create(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    parent = _node_or_404(request, node_id)
    form = NodeCreateForm(request.POST)
    if not form.is_valid():
        return _detail_response(request, parent, error=form_error(form), status=400)
    memory_type = get_type(form.cleaned_data["type"])
    content = form.cleaned_data["content"].encode() if memory_type.content is ContentKind.TEXT else None
    try:
        node = services.node_create(
            parent=parent,
            type=memory_type.name,
            name=form.cleaned_data["name"],
            description=form.cleaned_data["description"],
            content=content,
            by=principal_of(request),
        )
    except ServiceError as error:
        return _detail_response(request, parent, error=error.message, status=error.status)
    node = selectors.node_fresh(node=node)
    change = TreeChange(added=((parent.pk, node.pk),), counted=(parent.pk,))
    return _detail_response(request, node, message=f"Created '{node.name}'.", change=change)


@require_POST
@login_required
def node_update(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    node = _node_or_404(request, node_id)
    form = NodeUpdateForm(request.POST)
    if not form.is_valid():
        return _detail_response(request, node, error=form_error(form), status=400)
    try:
        updated = services.node_update(
            node=node,
            by=principal_of(request),
            expected_version=form.cleaned_data["version"],
            name=form.cleaned_data["name"] if "name" in request.POST else None,
            description=form.cleaned_data["description"] if "description" in request.POST else None,
        )
    except ServiceError as error:
        return _detail_response(request, node, error=error.message, status=error.status)
    change = TreeChange(renamed=(updated.pk,)) if updated.name != node.name else None
    return _detail_response(request, updated, message="Saved.", change=change)


@require_POST
@login_required
def node_delete(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    node = _node_or_404(request, node_id)
    try:
        deleted = services.node_delete(node=node, by=principal_of(request))
    except ServiceError as error:
        return _detail_response(request, node, error=error.message, status=error.status)
    parent = _parent(node)
    assert parent is not None  # the roots are internal folders, which no one may delete
    others = f" and {deleted - 1} node{'s' if deleted != 2 else ''} inside it" if deleted > 1 else ""
    change = TreeChange(removed=(node.pk,), counted=(parent.pk,))
    return _detail_response(request, parent, message=f"Deleted '{node.name}'{others}.", change=change)


# The CSRF middleware reads request.POST, which parses (and spools to disk) the whole multipart
# body; exempt from it, the view refuses an oversized body from its Content-Length first, and
# `_project_import` checks the CSRF token after that.
@max_body_bytes(archive_body_limit)
@csrf_exempt
@require_POST
@login_required
def project_upload(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    project = _node_or_404(request, node_id)
    try:
        refuse_longer_than(request, archive_body_limit(), "upload")
    except ServiceError as error:
        return _detail_response(request, project, error=error.message, status=error.status)
    return _project_import(request, project)


@csrf_protect
def _project_import(request: HtmxHttpRequest, project: Node) -> HttpResponse:
    form = ArchiveUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _detail_response(request, project, error=form_error(form), status=400)
    data = form.cleaned_data
    try:
        result = services.project_import(
            project=project, archive=data["archive"], mode=data["mode"], by=principal_of(request)
        )
    except ServiceError as error:
        return _detail_response(request, project, error=error.message, status=error.status)
    change = TreeChange(refilled=(project.pk,), counted=(project.pk,))
    project = selectors.node_fresh(node=project)
    return _detail_response(request, project, message=_import_message(result), change=change)


def _import_message(result: ImportResult) -> str:
    def count(number: int, noun: str) -> str:
        return f"{number} {noun}{'s' if number != 1 else ''}"

    if not (result.files or result.folders or result.updated or result.deleted):
        return f"Nothing changed: the project already holds the archive's {count(result.unchanged, 'file')}."
    message = f"Imported {count(result.files, 'file')} and {count(result.folders, 'folder')}"
    if result.updated:
        message += f", updated {count(result.updated, 'file')}"
    if result.deleted:
        message += f", deleted {count(result.deleted, 'node')}"
    if result.unchanged:
        message += f", left {count(result.unchanged, 'file')} unchanged"
    return message + "."


@require_GET
@login_required
def project_download(request: HtmxHttpRequest, node_id: str) -> HttpResponse | StreamingHttpResponse:
    project = _node_or_404(request, node_id)
    try:
        chunks = wait_slots().streaming(services.project_export(project=project))
    except ServiceError as error:
        return HttpResponse(error.message, status=error.status, content_type=PLAIN_TEXT)
    response = StreamingHttpResponse(chunks, content_type="application/gzip")
    # Django gives no header only when it is neither an attachment nor named.
    disposition = content_disposition_header(as_attachment=True, filename=f"{project.name}.tar.gz")
    response["Content-Disposition"] = disposition or "attachment"
    return response


# -- the user's documents ----------------------------------------------------------------------


def _user_documents(space: Space) -> list[Node]:
    folder = selectors.node_internal_folder(space=space, name=USER_FOLDER)
    return [
        node
        for node in selectors.node_children(node=folder)[:MAX_USER_DOCUMENTS]
        if (memory_type := _memory_type(node)) is not None and memory_type.content is ContentKind.TEXT
    ]


@require_GET
@login_required
def user_preferences(request: HtmxHttpRequest) -> HttpResponse:
    documents = _user_documents(_space(request))
    wanted = request.GET.get("doc")
    selected = next((node for node in documents if node.pk == wanted), None)
    if selected is None:
        selected = next((node for node in documents if node.name == DEFAULT_USER_DOCUMENT), None)
    if selected is None and documents:
        selected = documents[0]
    context: dict[str, Any] = {"documents": documents, "document": selected}
    if selected is not None:
        too_large = editor_too_large(selected)
        context.update({"too_large": too_large} if too_large else editor_context(selected))
        context["read_only"] = not _write_permissions(request, selected, _memory_type(selected))["can_edit_content"]
    return render_page(request, PREFERENCES, context)


def editor_too_large(document: Node) -> str:
    """Why the editor does not open the document, if it is too large for it; else ""."""
    size = document.content_size or 0
    if size <= EDITOR_MAX_BYTES:
        return ""
    return (
        f"'{document.name}' holds {size} bytes: the editor opens documents of up to {EDITOR_MAX_BYTES} bytes."
        " Write it with the API instead (PUT /api/nodes/<id>/content/)."
    )


def editor_context(document: Node) -> dict[str, Any]:
    """What the editor (memory/editor.html) opens a text document with: all of its text, at
    its version, the preview of its start, and how much of the text a live preview may send
    once percent-encoded (static/js/editor.js cuts it to that). See `editor_too_large` first."""
    data = selectors.node_content(node=document) or b""
    start, truncated = text_preview(data)
    return {
        "document": document,
        "form": DocumentEditForm(initial={"version": document.version, "content": data.decode(errors="replace")}),
        "preview_html": markdown_to_html(start),
        "preview_truncated": truncated,
        "preview_bytes": settings.MEMSITE_PREVIEW_MAX_BYTES - FORM_FIELDS_BYTES,
    }


def preview_body_limit() -> int:
    return settings.MEMSITE_PREVIEW_MAX_BYTES


def editor_body_limit() -> int:
    """The editor's save: a document at the content cap, each of its bytes percent-encoded as
    `%XX`, and the form's other fields."""
    return 3 * settings.MEMSITE_MAX_CONTENT_BYTES + FORM_FIELDS_BYTES


@max_body_bytes(preview_body_limit)
@required_role(Role.READER)  # it renders what it is sent, and writes nothing
@require_POST
@login_required
def markdown_preview(request: HtmxHttpRequest) -> HttpResponse:
    """The preview of the start of the text that the editor sends (`cut` when it sent only the
    start). Rendering holds one of the process's slots for waiting, or is refused as Busy."""
    form = MarkdownPreviewForm(request.POST)
    text = form.cleaned_data["content"] if form.is_valid() else ""
    try:
        with wait_slots().hold_or_busy():
            html = markdown_to_html(text)
    except Busy as busy:
        response = HttpResponse(busy.message, status=busy.status, content_type=PLAIN_TEXT)
        response["Retry-After"] = str(busy.retry_after_s)
        return response
    context = {"preview_html": html, "preview_truncated": bool(request.POST.get("cut"))}
    return render_page(request, f"{EDITOR}#preview", context)


@max_body_bytes(editor_body_limit)
@require_POST
@login_required
def document_save(request: HtmxHttpRequest, node_id: str) -> HttpResponse:
    """Replace a text document's content, if nobody changed it since the version the editor
    was opened at. The editor is on the user preferences page, or in the document's panel of
    the memory browser (`panel`), where a browser without htmx goes back to."""
    node = _node_or_404(request, node_id)
    form = DocumentEditForm(request.POST)
    status, message, error = 200, "", ""
    if not form.is_valid():
        status, error = 400, form_error(form)
    else:
        try:
            node = services.node_content_set(
                node=node,
                data=form.cleaned_data["content"].encode(),
                expected_version=form.cleaned_data["version"],
                by=principal_of(request),
            )
            message = "Saved."
        except ServiceError as error_:
            status, error = error_.status, error_.message
    panel = bool(request.POST.get("panel"))
    if request.htmx:
        context: dict[str, Any] = {"document": node, "message": message, "error": error, "panel": panel}
        if panel and not error:  # the panel's content and version, swapped in again
            memory_type = _memory_type(node)
            context.update(preview=_preview(node, memory_type), **_write_permissions(request, node, memory_type))
        return render_page(request, f"{EDITOR}#save_status", context, status=status)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, message)
    if panel:
        return redirect("memory:node_detail", node_id=node.pk)
    return redirect(f"{reverse('memory:user_preferences')}?doc={node.pk}")
