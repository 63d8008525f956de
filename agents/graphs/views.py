"""Reasoning graphs on the dashboard (seed 004): the list of graphs with a form to start one,
and a graph's page: the drawing, the context it rebuilds, the forms that queue work, and the
operations, which poll while any is waiting. Explained in docs/graphs.md."""

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING, HttpResponseClientRedirect

from agents.context import selectors as context_selectors
from agents.graphs import selectors as graph_selectors
from agents.graphs import services
from agents.graphs.forms import STANDARD_ROLES, GraphCreateForm, MemorizeForm
from agents.graphs.logic.context import GraphContext
from agents.graphs.logic.drawing import ContextGauge, GraphDrawing, context_gauge, graph_drawing
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, NodeKind, Turn
from memsite.errors import ServiceError
from memsite.llm.selectors import llm_providers_serving
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.principals import principal_of

GRAPHS = "graphs/graph_list.html"
GRAPH = "graphs/graph_detail.html"
GRAPHS_PAGE_SIZE = 50
OPS_SHOWN = 50
TURNS_SHOWN = 20
TURN_CHARS = 1_200  # of a turn's content, in a node's panel
DETAIL_CHARS = 4_000  # of an operation's detail, as JSON
POLL_S = 2
# How long a queued operation keeps the page polling before a worker takes it: the worker may
# be busy, or not running at all.
AWAIT_S = 120


# -- what the page shows -----------------------------------------------------------------------


@dataclass(frozen=True)
class ShownTurn:
    turn_id: int
    role: str | None  # None: a turn id the graph has no row for (a snapshot may name one)
    content: str
    more_chars: int  # cut from the content
    tokens: int | None


@dataclass(frozen=True)
class NodePanel:
    node: GraphNode
    notes: list[dict] | None  # the thought as notes, or None when it is a string
    turns: list[ShownTurn]
    more_turns: int
    parents: list[int]
    children: list[int]
    path: list[int]
    edges_out: list[GraphEdge]
    edges_in: list[GraphEdge]


@dataclass(frozen=True)
class OpRow:
    op: GraphOp
    delta: int | None  # tokens after less tokens before
    detail: str  # as JSON, cut to DETAIL_CHARS
    provider: str | None  # of the calls that served it: "offline" when heuristics wrote it


@dataclass(frozen=True)
class Live:
    """Whether the operations poll, and the version the page shows."""

    queued: int
    running: bool
    waiting: bool  # a queued operation no worker has taken within AWAIT_S
    version: str

    @property
    def settled(self) -> bool:
        return not self.running and (not self.queued or self.waiting)


def graph_or_404(request: HtmxHttpRequest, graph_id: int) -> Graph:
    """The graph of the request's space; another space's is a 404, as a missing one."""
    try:
        return graph_selectors.graph_get(space=principal_of(request).space, graph_id=graph_id)
    except ServiceError as error:
        raise Http404(error.message) from None


def _live(graph: Graph) -> Live:
    since = timezone.now() - timedelta(seconds=AWAIT_S)
    summary = graph_selectors.graph_op_counts(graph=graph, queued_since=since)
    running = graph.lease_until is not None and graph.lease_until > timezone.now()
    changed = graph.updated_at.timestamp() if graph.updated_at else 0
    return Live(
        queued=summary["queued"],
        running=running,
        waiting=summary["queued"] > 0 and summary["fresh"] == 0,
        version=f"{changed:.6f}-{summary['total']}-{summary['ended']}",
    )


def _drawing(graph: Graph) -> tuple[GraphDrawing, list[GraphNode]]:
    nodes = list(graph_selectors.graph_nodes(graph=graph))
    edges = list(graph_selectors.graph_edges(graph=graph))
    return graph_drawing(nodes, edges, graph_selectors.graph_depths(graph=graph)), nodes


def _gauge(graph: Graph) -> tuple[ContextGauge, GraphContext]:
    context = graph_selectors.graph_context(graph=graph)
    gauge = context_gauge(
        tokens=context.tokens,
        stand_in_tokens=sum(stand_in.tokens for stand_in in context.stand_ins),
        trigger=graph.trigger_tokens,
        target=graph.target_tokens,
    )
    return gauge, context


def _op_rows(graph: Graph) -> tuple[list[OpRow], int]:
    ops = graph_selectors.graph_ops(graph=graph)
    shown = list(ops.order_by("-id")[:OPS_SHOWN])
    rows = []
    providers = llm_providers_serving(model=GraphOp, served_ids=[op.pk for op in shown])
    for op in shown:
        detail = json.dumps(op.detail, indent=1, ensure_ascii=False) if op.detail else ""
        if len(detail) > DETAIL_CHARS:
            detail = detail[:DETAIL_CHARS] + f"\n… ({len(detail) - DETAIL_CHARS} more characters)"
        delta = None
        if op.tokens_before is not None and op.tokens_after is not None:
            delta = op.tokens_after - op.tokens_before
        rows.append(OpRow(op=op, delta=delta, detail=detail, provider=providers.get(op.pk)))
    return rows, ops.count() if len(shown) == OPS_SHOWN else len(shown)


def _node_panel(graph: Graph, node_id: int) -> NodePanel:
    try:
        node = graph_selectors.graph_node_get(graph=graph, node_id=node_id)
    except ServiceError as error:
        raise Http404(error.message) from None
    turn_ids = [turn for turn in node.related_turn_ids if isinstance(turn, int)]
    stored = graph_selectors.graph_turns(graph=graph, turn_ids=turn_ids[:TURNS_SHOWN])
    turns = []
    for turn_id in turn_ids[:TURNS_SHOWN]:
        turn: Turn | None = stored.get(turn_id)
        if turn is None:
            turns.append(ShownTurn(turn_id=turn_id, role=None, content="", more_chars=0, tokens=None))
            continue
        content = turn.content[:TURN_CHARS]
        turns.append(
            ShownTurn(
                turn_id=turn_id,
                role=turn.role,
                content=content,
                more_chars=len(turn.content) - len(content),
                tokens=turn.token_count,
            )
        )
    edges = list(graph_selectors.graph_edges(graph=graph, node_id=node_id))
    return NodePanel(
        node=node,
        notes=node.thought if isinstance(node.thought, list) else None,
        turns=turns,
        more_turns=max(len(turn_ids) - TURNS_SHOWN, 0),
        parents=graph_selectors.graph_parents(graph=graph, node_id=node_id),
        children=graph_selectors.graph_children(graph=graph, node_id=node_id),
        path=graph_selectors.graph_path_to_root(graph=graph, node_id=node_id),
        edges_out=[edge for edge in edges if edge.src == node_id],
        edges_in=[edge for edge in edges if edge.dst == node_id],
    )


def _whole_number(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isascii() and raw.isdigit() else None


def _ops_part(graph: Graph) -> dict[str, Any]:
    op_rows, op_count = _op_rows(graph)
    return {"op_rows": op_rows, "op_count": op_count, "live": _live(graph), "poll_s": POLL_S}


def _context_part(graph: Graph) -> dict[str, Any]:
    gauge, context = _gauge(graph)
    return {"gauge": gauge, "context": context, "turn_count": graph_selectors.graph_turn_count(graph=graph)}


def _drawing_part(graph: Graph) -> dict[str, Any]:
    drawing, nodes = _drawing(graph)
    return {"drawing": drawing, "nodes": nodes}


def _page(request: HtmxHttpRequest, graph: Graph, *, status: int = 200, **forms_and_errors: Any) -> HttpResponse:
    """The whole page; `forms_and_errors` are a refused form and its message (None: the default)."""
    context = {
        "graph": graph,
        **_drawing_part(graph),
        **_context_part(graph),
        **_ops_part(graph),
        "memorize_form": MemorizeForm(),
        "standard_roles": STANDARD_ROLES,
    }
    chosen = _whole_number(request.GET.get("node"))
    try:
        context["panel"] = _node_panel(graph, chosen if chosen is not None else _task_id(context["nodes"]))
    except Http404:
        context["panel"] = None
    context.update((name, value) for name, value in forms_and_errors.items() if value is not None)
    return render_page(request, GRAPH, context, status=status)


def _task_id(nodes: list[GraphNode]) -> int:
    return next((node.node_id for node in nodes if node.kind == NodeKind.TASK), 1)


# -- the list of graphs ------------------------------------------------------------------------


def _list_page(request: HtmxHttpRequest, form: GraphCreateForm, *, error: str = "", status: int = 200) -> HttpResponse:
    space = principal_of(request).space
    agent_id = _whole_number(request.GET.get("agent"))
    graphs = graph_selectors.graph_list(space=space, agent_id=agent_id)
    agent = context_selectors.agent_list(space=space).filter(pk=agent_id).first() if agent_id is not None else None
    page = Paginator(graphs, GRAPHS_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"page": page, "form": form, "error": error, "agent": agent}
    template = f"{GRAPHS}#create_form" if request.htmx and error else GRAPHS
    return render_page(request, template, context, status=status)


@require_GET
@login_required
def graph_list(request: HtmxHttpRequest) -> HttpResponse:
    agent_id = _whole_number(request.GET.get("agent"))
    return _list_page(request, GraphCreateForm(space=principal_of(request).space, initial={"agent": agent_id}))


@require_POST
@login_required
def graph_create(request: HtmxHttpRequest) -> HttpResponse:
    space = principal_of(request).space
    form = GraphCreateForm(request.POST, space=space)
    if not form.is_valid():
        return _list_page(request, form, error=form_error(form), status=400)
    try:
        graph = services.graph_create(space=space, task=form.cleaned_data["task"], agent=form.cleaned_data["agent"])
    except ServiceError as error:
        return _list_page(request, form, error=error.message, status=error.status)
    messages.success(request, f"Created graph {graph.pk}.")
    url = reverse("agents:graph_detail", args=[graph.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


# -- a graph's page ----------------------------------------------------------------------------


@require_GET
@login_required
def graph_detail(request: HtmxHttpRequest, graph_id: int) -> HttpResponse:
    return _page(request, graph_or_404(request, graph_id))


@require_GET
@login_required
def graph_node(request: HtmxHttpRequest, graph_id: int, node_id: int) -> HttpResponse:
    """A node's panel: its thought, its turns, its neighbours."""
    graph = graph_or_404(request, graph_id)
    if not request.htmx:
        return redirect(f"{reverse('agents:graph_detail', args=[graph.pk])}?node={node_id}#node-panel")
    context = {"graph": graph, "panel": _node_panel(graph, node_id)}
    return render_page(request, f"{GRAPH}#node_panel", context)


@require_GET
@login_required
def graph_live(request: HtmxHttpRequest, graph_id: int) -> HttpResponse:
    """The operations, and the drawing and the context when the graph has changed since `v`;
    286 once there is nothing left to wait for."""
    graph = graph_or_404(request, graph_id)
    if not request.htmx:
        return redirect("agents:graph_detail", graph_id=graph.pk)
    context = {"graph": graph, **_ops_part(graph)}
    if context["live"].version != request.GET.get("v"):
        context.update(_drawing_part(graph), **_context_part(graph), refresh=True)
    status = HTMX_STOP_POLLING if context["live"].settled else 200
    return render_page(request, f"{GRAPH}#live_update", context, status=status)


# -- recall and memorize -----------------------------------------------------------------------


def _actions(
    request: HtmxHttpRequest,
    graph: Graph,
    *,
    form: MemorizeForm | None = None,
    message: str = "",
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The forms with what happened and, when something was queued, the operations (out of
    band), polling. Without JavaScript, the page again, or back to it."""
    if not request.htmx:
        if error:
            return _page(request, graph, memorize_form=form, actions_error=error, status=status)
        messages.success(request, message)
        return redirect("agents:graph_detail", graph_id=graph.pk)
    context = {
        "graph": graph,
        "memorize_form": form or MemorizeForm(),
        "standard_roles": STANDARD_ROLES,
        "actions_message": message,
        "actions_error": error,
    }
    if not error:  # the new operation, polling, and the context with the new turns
        context.update(_ops_part(graph), **_context_part(graph), queued_now=True)
    return render_page(request, f"{GRAPH}#actions_update", context, status=status)


@require_POST
@login_required
def graph_recall(request: HtmxHttpRequest, graph_id: int) -> HttpResponse:
    graph = graph_or_404(request, graph_id)
    try:
        op = services.graph_recall(graph=graph, by=principal_of(request))
    except ServiceError as error:
        return _actions(request, graph, error=error.message, status=error.status)
    return _actions(request, graph, message=f"Recall queued (operation {op.pk}).")


@require_POST
@login_required
def graph_memorize(request: HtmxHttpRequest, graph_id: int) -> HttpResponse:
    graph = graph_or_404(request, graph_id)
    form = MemorizeForm(request.POST)
    if not form.is_valid():
        return _actions(request, graph, form=form, error=form_error(form), status=400)
    try:
        op = services.graph_memorize(graph=graph, messages=form.cleaned_data["messages"], by=principal_of(request))
    except ServiceError as error:
        return _actions(request, graph, form=form, error=error.message, status=error.status)
    turn_ids = op.detail.get("turn_ids", [])
    turns = f"turn {turn_ids[0]}" if len(turn_ids) == 1 else f"turns {turn_ids[0]}–{turn_ids[-1]}"
    return _actions(request, graph, message=f"Stored as {turns}; memorize queued (operation {op.pk}).")
